#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Rewrite the blocks of real output in docs/model-serving.md from a fresh
# run: the model demo (what `make model-demo` runs: run.sh fastapi 100 4,
# recorded with --requests --files --net) and load_model.py recorded from its
# first instruction. The prose is not touched. Each block of output sits
# between two markers, its fences included:
#
#   <!-- generated: SPEC -->
#   ```
#   ...
#   ```
#   <!-- end generated -->
#
# SPEC says what goes there:
#   serve load.py                    load.py's lines (the client's view)
#   load record                      the record command line, then what it
#                                    and load_model.py print
#   PROF report [OPTS]: SEC[, SEC]   those sections of `latprof report OPTS`
#                                    on PROF (serve or load), in that order
#
# The result is written to a temporary file beside OUT and renamed, so OUT is
# never partial. tests/e2e/test_model_doc.sh writes a copy and compares it
# with the committed doc.
#
# Usage: examples/model_server/doc.sh [DOC [OUT]]   (root; from `make model-doc`)
# DOC defaults to docs/model-serving.md, OUT to DOC. Environment: WORK (the
# profiles and outputs; default build/model), PORT and BACKEND_PORT (for
# run.sh; 18000 and 18001 as in `make model-demo`), LATPROF (default
# ./latprof); WORK and LATPROF relative to the repo root, or absolute.
set -euo pipefail

DOC=$(realpath -m "${1:-docs/model-serving.md}")
OUT=$(realpath -m "${2:-$DOC}")
# The commands the doc shows are run from the repo root, as it shows them.
cd "$(dirname "$0")/../.."
WORK=${WORK:-build/model}
export LATPROF=${LATPROF:-./latprof}
export PORT=${PORT:-18000} BACKEND_PORT=${BACKEND_PORT:-18001}
PY=/usr/bin/python3
blocks=$WORK/doc-blocks
tmp=

cleanup() {
	[ -n "$tmp" ] && rm -f "$tmp"
	return 0
}
trap cleanup EXIT

die() {
	echo "doc.sh: $*" >&2
	exit 1
}

# section FILE NAME: the section of a report whose header is NAME or starts
# with "NAME (", up to the blank line that ends it.
section() {
	awk -v name="$2" '
		!on && ($0 == name || index($0, name " (") == 1) { on = 1 }
		on && $0 == "" { exit }
		on { print }
	' "$1"
}

# report PROF OPTS SECTIONS: print the SECTIONS (", " between them) of
# `latprof report OPTS` on PROF's profile, a blank line between two.
report() {
	local prof=$1 opts=$2 secs=$3 out=$blocks/report.txt name first=1
	# shellcheck disable=SC2086 # OPTS are words from the doc's marker
	"$LATPROF" report "$WORK/$prof.pb.gz" --no-color $opts >"$out"
	while [ -n "$secs" ]; do
		name=${secs%%, *}
		[ "$name" = "$secs" ] && secs= || secs=${secs#*, }
		[ $first = 1 ] || echo
		first=0
		section "$out" "$name" | grep '' ||
			die "no section \"$name\" in latprof report $opts on $prof"
	done
}

# block SPEC: the output that SPEC names (see the top of this file)
block() {
	local spec=$1 secs="" w
	read -ra w <<<"${spec%%:*}"
	[[ $spec == *:* ]] && secs=${spec#*: }
	case "${w[0]} ${w[1]:-}" in
	"serve load.py")
		grep '^load ' "$WORK/serve.out" || die "no load lines in $WORK/serve.out" ;;
	"load record")
		echo "\$ sudo ./latprof ${record[*]}"
		cat "$WORK/load.out" ;;
	"serve report" | "load report")
		[ -n "$secs" ] || die "no sections in \"$spec\""
		report "${w[0]}" "${w[*]:2}" "$secs" ;;
	*)
		die "unknown block \"$spec\"" ;;
	esac
}

mkdir -p "$WORK" "$blocks"
[ -x "$LATPROF" ] || die "no $LATPROF (make first)"
grep -q '^<!-- generated: ' "$DOC" || die "no generated blocks in $DOC"

# The model demo, as `make model-demo` runs it
PROFILE=$WORK/serve.pb.gz examples/model_server/run.sh fastapi 100 4 >"$WORK/serve.out"

# Model loading. The 22 MB model is trained once (the same bytes every time);
# renamed into place only when whole.
model=$WORK/big.joblib
if [ ! -e "$model" ]; then
	$PY examples/model_server/load_model.py --model "$WORK/big-new.joblib" --seconds 0 >/dev/null
	mv "$WORK/big-new.joblib" "$model"
fi
record=(record --files --interval 0.5 -o "$WORK/load.pb.gz" --
	"$PY" examples/model_server/load_model.py --model "$model")
"$LATPROF" "${record[@]}" >"$WORK/load.out" 2>&1 ||
	{ cat "$WORK/load.out" >&2; die "latprof ${record[*]} failed"; }

# Each marker's output into blocks/N, in the doc's order
n=0
while IFS= read -r spec; do
	n=$((n + 1))
	block "$spec" >"$blocks/$n"
done < <(sed -n 's/^<!-- generated: \(.*\) -->$/\1/p' "$DOC")

tmp=$(mktemp "$OUT.XXXXXX")
awk -v dir="$blocks" '
	/^<!-- generated: .* -->$/ {
		if (on) { print "doc.sh: line " NR ": generated block inside another" > "/dev/stderr"; err = 1; exit }
		on = 1; n++; print; print "```"
		f = dir "/" n
		while ((getline line < f) > 0)
			print line
		close(f)
		print "```"
		next
	}
	/^<!-- end generated -->$/ {
		if (!on) { print "doc.sh: line " NR ": end marker without a block" > "/dev/stderr"; err = 1; exit }
		on = 0
	}
	!on { print }
	END {
		if (!err && on)
			print "doc.sh: a generated block has no end marker" > "/dev/stderr"
		exit err || on
	}
' "$DOC" >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$OUT"
tmp=
echo "doc.sh: $n blocks of $OUT rewritten"
