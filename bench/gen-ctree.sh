#!/bin/sh
# Generates a tree of C files and a Makefile, for measuring a parallel build
# with `vmscale run cmd` (see docs/cmd.md).
# Usage: bench/gen-ctree.sh DIR [FILES] [FUNCS_PER_FILE]
set -eu
dir=${1:?usage: gen-ctree.sh DIR [FILES] [FUNCS_PER_FILE]}
files=${2:-64}
funcs=${3:-40}
mkdir -p "$dir"
i=0
while [ "$i" -lt "$files" ]; do
    f="$dir/unit$i.c"
    {
        echo "#include <string.h>"
        j=0
        while [ "$j" -lt "$funcs" ]; do
            cat <<C
static unsigned long f${i}_$j(const char *s, unsigned long n) {
    unsigned long h = $j;
    char buf[256];
    memset(buf, (int)n, sizeof buf);
    for (unsigned long k = 0; k < n && s[k]; k++)
        h = h * 31 + (unsigned char)s[k] + (unsigned char)buf[k % sizeof buf];
    return h ^ (h >> 7);
}
C
            j=$((j + 1))
        done
        echo "unsigned long unit$i(const char *s, unsigned long n) {"
        echo "    unsigned long h = 0;"
        j=0
        while [ "$j" -lt "$funcs" ]; do
            echo "    h += f${i}_$j(s, n);"
            j=$((j + 1))
        done
        echo "    return h;"
        echo "}"
    } > "$f"
    i=$((i + 1))
done
{
    echo "OBJS = \$(patsubst %.c,%.o,\$(wildcard unit*.c))"
    echo "CFLAGS ?= -O2"
    echo "all: libtree.a"
    echo "libtree.a: \$(OBJS)"
    printf '\tar rcs $@ $(OBJS)\n'
    echo "%.o: %.c"
    printf '\t$(CC) $(CFLAGS) -c -o $@ $<\n'
    echo "clean:"
    printf '\trm -f $(OBJS) libtree.a\n'
} > "$dir/Makefile"
echo "generated $files files x $funcs functions in $dir"
