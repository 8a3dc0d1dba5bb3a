#!/usr/bin/perl
# Reads pg_prove --verbose output and prints, for each test file named on the command line, one
# line: mode, file, passed, failed, the tests that did not pass ("-" when none), and the file's
# plan. The tests that did not pass are given by kind, each a list of ranges, joined by ";":
#   E  a throws_ok that caught an error, but another one than pgRouting's (SQLSTATE or wording):
#      the input is refused by both, in other words;
#   D  a lives_ok whose call raised an error: refused where pgRouting answers;
#   F  any other failure (a wrong answer, an error not raised, ...);
#   N  planned but never run: the file stopped on an error (psql's ON_ERROR_STOP).
# So "E:4-6;N:11-13". A file pg_prove never reported is "not-run".
#   tap_summary.pl MODE TAP_FILE FILE...
use strict;
use warnings;

my ($mode, $tap, @files) = @ARGV;
my (%plan, %ok, %kind, %seen, $current, $test);
open(my $in, '<', $tap) or die "tap_summary.pl: $tap: $!\n";
while (my $line = <$in>) {
  chomp $line;
  if ($line =~ /^(\S+\.pg) \.+ ?(.*)$/) { $current = $1; $seen{$current} = 1; undef $test; next; }
  next unless defined $current;
  if ($line =~ /^1\.\.(\d+)/) { $plan{$current} = $1; }
  elsif ($line =~ /^ok (\d+)/) { $ok{$current}{$1} = 1; undef $test; }
  elsif ($line =~ /^not ok (\d+)/) { $test = $1; $kind{$current}{$test} = 'F'; }
  elsif (defined $test && $line =~ /^#\s+caught: (?!no exception)\S+:/) { $kind{$current}{$test} = 'E'; }
  elsif (defined $test && $line =~ /^#\s+died: \S+:/) { $kind{$current}{$test} = 'D'; }
  elsif ($line !~ /^#/) { undef $test; }
}
close $in;

# "3,5,11-13" from a sorted list of numbers.
sub ranges {
  my @n = @_;
  my @out;
  while (@n) {
    my $first = shift @n;
    my $last = $first;
    $last = shift @n while @n && $n[0] == $last + 1;
    push @out, $first == $last ? "$first" : "$first-$last";
  }
  return join(',', @out);
}

for my $file (@files) {
  my $planned = $plan{$file} // 0;
  my @failed = grep { !$ok{$file}{$_} } 1 .. $planned;
  my $passed = $planned - @failed;
  my $failures;
  if (!$seen{$file}) { $failures = 'not-run'; }
  elsif (!$planned) { $failures = 'no-plan'; }
  elsif (!@failed) { $failures = '-'; }
  else {
    my %by_kind;
    push @{ $by_kind{ $kind{$file}{$_} // 'N' } }, $_ for @failed;
    $failures = join(';', map { "$_:" . ranges(@{ $by_kind{$_} }) } grep { $by_kind{$_} } qw(E D F N));
  }
  print join("\t", $mode, $file, $passed, scalar(@failed), $failures, $planned), "\n";
}
