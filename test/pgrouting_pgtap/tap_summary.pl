#!/usr/bin/perl
# Reads pg_prove --verbose output and prints, for each test file named on the command line, one
# line: mode, file, passed, failed, the tests that did not pass ("-" when none), and the file's
# plan. A test that did not pass is one reported "not ok", or one the plan promised that never
# ran (the file stopped on an error). A file pg_prove never reported is "not-run", a failure.
#   tap_summary.pl MODE TAP_FILE FILE...
use strict;
use warnings;

my ($mode, $tap, @files) = @ARGV;
my (%plan, %ok, %seen, $current);
open(my $in, '<', $tap) or die "tap_summary.pl: $tap: $!\n";
while (my $line = <$in>) {
  chomp $line;
  if ($line =~ /^(\S+\.pg) \.+ ?(.*)$/) { $current = $1; $seen{$current} = 1; next; }
  next unless defined $current;
  if ($line =~ /^1\.\.(\d+)/) { $plan{$current} = $1; }
  elsif ($line =~ /^ok (\d+)/) { $ok{$current}{$1} = 1; }
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
  return @out ? join(',', @out) : '-';
}

for my $file (@files) {
  my $planned = $plan{$file} // 0;
  my @failed = grep { !$ok{$file}{$_} } 1 .. $planned;
  my $passed = $planned - @failed;
  my $failures = $seen{$file} ? ($planned ? ranges(@failed) : 'no-plan') : 'not-run';
  print join("\t", $mode, $file, $passed, scalar(@failed), $failures, $planned), "\n";
}
