# bench/fidelity/perl_grow.pl FILE: strings that grow by appends. Each line
# of FILE with two capitals A-F in a row is appended to a hash value keyed by
# its first three characters (~157 000 keys for gen_inputs.py's text), so
# every append reallocs one of many long-lived strings: a block grows while
# the blocks around it live on. Prints the key count and the total length.
use strict;
use warnings;
my %h;
while (my $line = <>) {
	$h{ substr($line, 0, 3) } .= $line if $line =~ /[A-F]{2}/;
}
my $len = 0;
$len += length for values %h;
print scalar(keys %h), " $len\n";
