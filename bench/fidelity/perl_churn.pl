# bench/fidelity/perl_churn.pl N: an interpreter whose every object is a
# malloc (Debian's perl has no allocator of its own, unlike CPython's
# pymalloc): N rounds of a hash of 50 000 keys whose values (arrays of
# short strings) are replaced and deleted, and a window of the last 20 000
# records (hashes with a nested array). Prints the key count and a checksum,
# the same under every allocator.
use strict;
use warnings;
my $n = shift // 300000;
my (%h, @keep);
my $acc = 0;
for my $i (1 .. $n) {
	my $k = "key" . ($i * 7919 % 50000);
	$h{$k} = [ map { "v$_" x (1 + $_ % 5) } 1 .. (1 + $i % 7) ];
	push @keep, { id => $i, name => "n$i", tags => [ $i % 3, $i % 5 ] } if $i % 3 == 0;
	shift @keep if @keep > 20000;
	$acc += length(join ",", @{ $h{$k} });
	delete $h{ "key" . (($i * 31) % 50000) } if $i % 2;
}
print scalar(keys %h), " ", scalar(@keep), " $acc\n";
