#!/bin/sh
# Builds the C speed reference for jhash2 with gcc -O2 into target/ and runs it.
# Compare its ns/hash with `cargo bench --bench hash`.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/target/c"
gcc -O2 -Wall -Wextra -o "$root/target/c/jhash2_ref" "$root/benches/c/jhash2_ref.c"
exec "$root/target/c/jhash2_ref"
