#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Write the seed corpus of tests/fuzz/fuzz_symbolize.c into DIR, in its input
# format: a kind byte (with a return-address bit per word from bit 4 up), four
# little-endian 64-bit address words, the payload.
# ELF seeds are compiled here from corpus/trivial.c and trivial.cpp (small
# binaries, not committed); text seeds come from corpus/*.txt (a kallsyms
# seed's /proc/modules part from the .modules file of the same name);
# corpus/*.bin are inputs kept as they are (reproducers of fixed findings).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: make-corpus.sh DIR}
src=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
rm -f "$out"/*

KIND_ELF=0
KIND_PERFMAP=1
KIND_KALLSYMS=2
RET2=$((1 << 5))	# word 2 (index 1) is a return address

le64()
{
	local v=$1 i
	for ((i = 0; i < 8; i++)); do
		printf "\\x$(printf %02x $(((v >> (8 * i)) & 255)))"
	done
}

# seed NAME KIND PAYLOAD WORD...
seed()
{
	local name=$1 kind=$2 payload=$3 n=0 w
	shift 3
	{
		printf "\\x$(printf %02x "$kind")"
		for w in "$@"; do
			le64 "$w"
			n=$((n + 1))
		done
		for (( ; n < 4; n++)); do
			le64 0
		done
		cat "$payload"
	} > "$out/$name"
}

# Address of symbol $2 in ELF $1, 0 if it has none.
sym()
{
	local a
	a=$(nm --defined-only "$1" 2>/dev/null | awk -v s="$2" '$3 == s { print $1; exit }')
	echo $((16#${a:-0}))
}

# elf NAME COMPILER FLAGS... (skipped if the compiler is missing)
elf()
{
	local name=$1 cc=$2 bin=$tmp/$1 file=$src/trivial.c
	shift 2
	command -v "$cc" > /dev/null || { echo "make-corpus: no $cc, skipping $name" >&2; return 0; }
	case $cc in *++) file=$src/trivial.cpp ;; esac
	"$cc" "$@" -o "$bin" "$file"
	seed "elf-$name" $((KIND_ELF | RET2)) "$bin" "$(sym "$bin" main)" \
		$(($(sym "$bin" sum_squares) + 9)) "$(sym "$bin" leaf)" \
		"$(sym "$bin" _ZNK2ns3boxIlE3getEv)"
}

small=-Wl,-z,noseparate-code	# one page less per segment
elf gcc-O0-g gcc -O0 -g $small
elf gcc-O2-g gcc -O2 -g $small
elf gcc-O2-g-dwarf4 gcc -O2 -gdwarf-4 $small
elf gcc-O2-stripped gcc -O2 -g -s $small
elf gcc-O2-g-nopie gcc -O2 -g -fno-pie -no-pie $small
elf gcc-O2-g-shared gcc -O2 -g -fPIC -shared $small
elf gcc-O2-g-reloc gcc -O2 -g -c
elf clang-O2-g clang-14 -O2 -g $small
elf gxx-O1-g g++ -O1 -g $small

for f in "$src"/perfmap-*.txt; do
	seed "$(basename "$f" .txt)" $((KIND_PERFMAP | RET2)) "$f" 0x7f3a8c000050 \
		0x7f3a8c000310 0x7f0001000150 0xffffffffffffff10
done

for f in "$src"/kallsyms-*.txt; do
	m=${f%.txt}.modules
	if [ -e "$m" ]; then
		{ cat "$f"; printf '\0'; cat "$m"; } > "$tmp/ksyms"
	else
		cp "$f" "$tmp/ksyms"
	fi
	seed "$(basename "$f" .txt)" $((KIND_KALLSYMS | RET2)) "$tmp/ksyms" 0xffffffff81000118 \
		0xffffffff81800150 0xffffffffc0000010 0xffffffffc0003100
done

for f in "$src"/*.bin; do
	[ -e "$f" ] && cp "$f" "$out/"
done
exit 0
