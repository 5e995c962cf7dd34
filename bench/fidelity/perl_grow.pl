# bench/fidelity/perl_grow.pl FILE: strings that grow by appends, perl's
# `perl -ne` idiom. Each line of FILE with two capitals A-F in a row is
# appended to a hash value keyed by its first three characters (~150 000
# keys for gen_inputs.py's text): many long-lived strings growing while the
# blocks around them live on (2.3 M calls: malloc, calloc, free, a tenth
# realloc; 9 % of the requests 4-8 KiB). The line is read into $_, as -n
# does: under arena that is 1 GB of chunks pinned by survivors against 48 MB
# under glibc, where reading into a lexical keeps arena at 2.3x (why, inside
# perl, not traced). Prints the key count and the total length.
use strict;
use warnings;
my %h;
while (<>) {
	$h{ substr($_, 0, 3) } .= $_ if /[A-F]{2}/;
}
my $len = 0;
$len += length for values %h;
print scalar(keys %h), " $len\n";
