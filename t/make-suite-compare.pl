#!/usr/bin/perl
# t/make-suite-compare.pl - the comparisons of t/make-suite-compare.sh,
# over the driver reports (S/RUN.out) and work directories (S/RUN) that
# GNU make's test driver (tests/run_make_tests.pl) leaves.
#
#   make-suite-compare.pl filtered S A B LOADED
#       Every case of every category must give the same result in runs A
#       and B once B's output is rid of the documented traces of loading
#       the object LOADED (exact strings, below).  Prints the counts and
#       each difference; writes the categories that differ, one a line, to
#       S/residue.  Exit 0 when there is none, 1 otherwise.
#   make-suite-compare.pl exact S A B CATEGORY...
#       The categories must have given byte-identical results in A and B:
#       the driver's report (status, exit-status errors) and every output
#       and expected-output file.  Exit 0 or 1 likewise.
#
# The driver keeps, for a category with a failed case, the output of
# every case (NAME.log, NAME.log.1, ...) and, for each failed case, the
# expected output (NAME.base.N) and a diff; nothing for a category that
# passed.  A wrong exit status is only reported in its run's report.
use strict;
use warnings;

my ($mode, $S, $A, $B, @rest) = @ARGV;
die "usage: $0 filtered|exact S A B ...\n" unless $mode && $B;

sub slurp {
	my ($f) = @_;
	open(my $h, "<", $f) or return undef;
	local $/;
	my $s = <$h>;
	return $s;
}

# The driver's report: category -> { status, cases, passed, errors }.
sub report {
	my ($run) = @_;
	my (%r, $cat);
	open(my $h, "<", "$S/$run.out") or die "$S/$run.out: $!\n";
	while (my $l = <$h>) {
		if ($l =~ m{^(\w[\w-]*/[\w.-]+) \.{3,}}) {
			$cat = $1;
			$r{$cat} = { errors => [], status => "missing", cases => 0, passed => 0 };
		}
		next unless defined $cat;
		if ($l =~ /(Error running .*)$/) {
			my $where = <$h> // "";
			chomp $where;
			push @{$r{$cat}{errors}}, "$1 at $where";
		}
		if ($l =~ /\bok +\((\d+) passed\)/) {
			@{$r{$cat}}{qw(status cases passed)} = ("ok", $1, $1);
		} elsif ($l =~ /FAILED \((\d+)\/(\d+) passed\)/) {
			@{$r{$cat}}{qw(status cases passed)} = ("FAILED", $2, $1);
		} elsif ($l =~ /\bN\/A\s*$/) {
			@{$r{$cat}}{qw(status cases passed)} = ("N/A", 0, 0);
		}
	}
	return \%r;
}

# "", ".1", ".2" ... are cases 1, 2, 3 ...
sub case_name {
	my ($cat, $sfx) = @_;
	return "$cat case " . ($sfx eq "" ? 1 : substr($sfx, 1) + 1);
}

if ($mode eq "exact") {
	my ($ra, $rb) = (report($A), report($B));
	my $bad = 0;
	for my $cat (@rest) {
		my ($x, $y) = ($ra->{$cat}, $rb->{$cat});
		my @why;
		if (!$x || !$y) {
			push @why, "did not run in both";
		} else {
			push @why, "result: $x->{status} ($x->{passed}/$x->{cases}) vs $y->{status} ($y->{passed}/$y->{cases})"
				if "$x->{status} $x->{passed} $x->{cases}" ne "$y->{status} $y->{passed} $y->{cases}";
			push @why, "exit statuses:\n    " . join("\n    ", @{$x->{errors}}) .
				"\n  vs\n    " . join("\n    ", @{$y->{errors}})
				if join("\n", @{$x->{errors}}) ne join("\n", @{$y->{errors}});
			my %f;
			for my $run ($A, $B) {
				for (glob("$S/$run/$cat.log* $S/$run/$cat.base* $S/$run/$cat.diff*")) {
					s{^\Q$S/$run/\E}{};
					$f{$_} = 1;
				}
			}
			for my $f (sort keys %f) {
				my ($p, $q) = (slurp("$S/$A/$f"), slurp("$S/$B/$f"));
				if (!defined $p || !defined $q) {
					push @why, "$f: only in " . (defined $p ? $A : $B);
				} elsif ($f !~ /\.diff/ && $p ne $q) {
					push @why, "$f differs:\n--- $A\n$p--- $B\n$q";
				}
			}
		}
		next unless @why;
		$bad++;
		print "make-suite-compare: DIFFERENCE $cat ($A vs $B): $_\n" for @why;
	}
	exit($bad ? 1 : 0);
}

die "$0: unknown mode $mode\n" unless $mode eq "filtered";
my $loaded = $rest[0] // die "$0: filtered needs the loaded object's path\n";

# The documented traces of `load LOADED` given as --eval='load LOADED':
# exact strings, removed in this order (an earlier one contains a later
# one).  The option in MAKEFLAGS/MFLAGS as make writes it, then after a
# shell removed the backslash (`echo $(MAKEFLAGS)` in a recipe); the
# object in .LOADED before the suite's own object, then alone.
my @traces = (" --eval=load\\ $loaded", " --eval=load $loaded", "$loaded testload.so",
	      $loaded);
my %replace = ("$loaded testload.so" => "testload.so");
sub unload {
	my ($s) = @_;
	$s =~ s/\Q$_\E/$replace{$_} \/\/ ""/ge for @traces;
	return $s;
}

# compare_answer() in the driver also takes /REGEX/ answers.
sub matches {
	my ($answer, $log) = @_;
	return 1 if $answer eq $log;
	return $answer =~ m{^/(.+)/$}s && $log =~ /$1/;
}

# The cases of `cat` whose output, after `filter`, does not match their
# expected output: suffix -> output.
# `cleaned` counts the cases the filter made match.
my $cleaned = 0;
sub mismatches {
	my ($run, $cat, $filter) = @_;
	my %m;
	for my $d (glob("$S/$run/$cat.diff*")) {
		my ($sfx) = $d =~ /\.diff((?:\.\d+)?)$/;
		my $out = $filter->(slurp("$S/$run/$cat.log$sfx") // "");
		if (matches(slurp("$S/$run/$cat.base$sfx") // "", $out)) {
			$cleaned++;
		} else {
			$m{$sfx} = $out;
		}
	}
	return \%m;
}

my ($ra, $rb) = (report($A), report($B));
my ($cases, $afail, $braw) = (0, 0, 0);
my (@diffs, %residue);
my %all = map { $_ => 1 } (keys %$ra, keys %$rb);
for my $cat (sort keys %all) {
	my ($x, $y) = ($ra->{$cat}, $rb->{$cat});
	my @why;
	if (!$x || !$y || $x->{status} eq "missing" || $y->{status} eq "missing") {
		push @why, "$cat: did not run to its result line in both runs";
	} elsif ($x->{cases} != $y->{cases} || ($x->{status} eq "N/A") != ($y->{status} eq "N/A")) {
		push @why, "$cat: $x->{status} with $x->{cases} cases in $A, " .
			"$y->{status} with $y->{cases} in $B";
	} else {
		$cases += $x->{cases};
		$afail += $x->{cases} - $x->{passed};
		$braw += $y->{cases} - $y->{passed};
		my @eb = map { unload($_) } @{$y->{errors}};
		push @why, "$cat: exit statuses differ:\n  $A: " . join("\n  $A: ", @{$x->{errors}}) .
			"\n  $B: " . join("\n  $B: ", @eb)
			if join("\n", @{$x->{errors}}) ne join("\n", @eb);
		my $ma = mismatches($A, $cat, sub { $_[0] });
		my $mb = mismatches($B, $cat, \&unload);
		my %n = map { $_ => 1 } (keys %$ma, keys %$mb);
		for my $sfx (sort { ($a =~ s/\.//r || 0) <=> ($b =~ s/\.//r || 0) } keys %n) {
			my $c = case_name($cat, $sfx);
			if (!exists $ma->{$sfx}) {
				push @why, "$c: passes in $A, fails in $B with (filtered):\n$mb->{$sfx}";
			} elsif (!exists $mb->{$sfx}) {
				push @why, "$c: fails in $A, passes in $B";
			} elsif ($ma->{$sfx} ne $mb->{$sfx}) {
				push @why, "$c: fails in both, differently:\n--- $A\n$ma->{$sfx}--- $B (filtered)\n$mb->{$sfx}";
			}
		}
	}
	next unless @why;
	$residue{$cat} = 1;
	push @diffs, @why;
}
print "make-suite-compare: $cases cases; failed in $A: $afail; failed in $B: $braw, " .
	($braw - $cleaned) . " once the load's traces are filtered out; categories that differ: " .
	scalar(keys %residue) . "\n";
print "make-suite-compare: difference: $_\n" for @diffs;
open(my $h, ">", "$S/residue") or die "$S/residue: $!\n";
print $h "$_\n" for sort keys %residue;
close($h);
exit(%residue ? 1 : 0);
