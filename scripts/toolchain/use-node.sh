# Sourced (bash) by .ci/run before anything else: puts a Node >= 22.15 first on PATH — the machine's own
# when it is recent enough, else Node 24 fetched into .toolchain/ by ensure-node.mjs (linux-x64 only).
_toolchain_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! command -v node >/dev/null 2>&1; then
  echo "toolchain: no node on PATH; install Node.js 24 LTS (https://nodejs.org)" >&2
  return 1
fi
_node_bin=$(node "$_toolchain_dir/ensure-node.mjs" --bin-dir) || return 1
export PATH="$_node_bin:$PATH"
echo "toolchain: node $(node --version) ($(command -v node)), npm $(npm --version)"
unset _toolchain_dir _node_bin
