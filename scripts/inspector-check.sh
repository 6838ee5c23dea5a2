#!/usr/bin/env bash
# Drive `toolfind serve-mcp` with the MCP Inspector's CLI mode, over the shipped catalogs and as a
# proxy in front of the npm reference server @modelcontextprotocol/server-everything and of the
# test backend tests/fixtures/backends/rich_server.py (resources, templates, prompts).
# Needs node/npm and an installed `toolfind` on PATH. Exits non-zero on the first failed check.
# The Inspector is pinned exactly, so that CI is reproducible. Its CLI fails with "Cannot find
# module .../inspector/cli/package.json" when the working directory lies below a stray
# package.json (say /tmp/package.json left by an npm install in /tmp): run it from a clean tree.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TOOLFIND_CACHE_DIR="$work/cache"

(cd "$work" && npm install --prefix "$work" --silent --no-audit --no-fund \
  @modelcontextprotocol/inspector@0.21.1 @modelcontextprotocol/server-everything@2026.8.31 >/dev/null)
inspector="$work/node_modules/.bin/mcp-inspector"
everything="$work/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
cat >"$work/servers.json" <<JSON
{"mcpServers": {"everything": {"command": "node", "args": ["$everything", "stdio"]}}}
JSON
python=$(command -v python || command -v python3)
cat >"$work/rich.json" <<JSON
{"mcpServers": {"rich": {"command": "$python", "args": ["$repo/tests/fixtures/backends/rich_server.py"]}}}
JSON

check() {  # check NAME EXPECTED-TEXT -- COMMAND...
  local name=$1 expected=$2
  shift 3
  local out
  out=$(timeout 120 "$inspector" --cli "$@" 2>&1) || { echo "inspector: $name: failed"; echo "$out"; exit 1; }
  if ! grep -qF -- "$expected" <<<"$out"; then
    echo "inspector: $name: expected '$expected' in:"; echo "$out" | head -40; exit 1
  fi
  echo "inspector: $name: ok"
}

cat_args=(toolfind serve-mcp -c "$repo/catalogs")
check "catalogs tools/list" '"name": "proxy_search_tools"' -- "${cat_args[@]}" --method tools/list
check "catalogs search_tools" 'compress_file' -- "${cat_args[@]}" \
  --method tools/call --tool-name proxy_search_tools --tool-arg "query=compress a file"
proxy_args=(toolfind serve-mcp -c "$repo/catalogs" --servers "$work/servers.json" --backend-wait 60)
check "proxy tools/list (direct)" '"name": "everything__echo"' -- "${proxy_args[@]}" --exposure direct --method tools/list
check "proxy search_tools" 'everything__echo' -- "${proxy_args[@]}" \
  --method tools/call --tool-name proxy_search_tools --tool-arg "query=echo message"
check "proxy call (search exposure)" 'Echo: hello proxy' -- "${proxy_args[@]}" \
  --method tools/call --tool-name everything__echo --tool-arg "message=hello proxy"
check "proxy call_tool" 'Echo: via call_tool' -- "${proxy_args[@]}" \
  --method tools/call --tool-name proxy_call_tool --tool-arg "name=everything/echo" \
  --tool-arg 'arguments={"message": "via call_tool"}'

rich_args=(toolfind serve-mcp -c "$repo/catalogs" --servers "$work/rich.json" --backend-wait 60)
check "proxy resources/list" '"uri": "toolfind://rich/note://hello"' -- "${rich_args[@]}" --method resources/list
check "own resources/list" '"uri": "toolfind:deferred-tools"' -- "${rich_args[@]}" --method resources/list
check "proxy resources/templates/list" '"uriTemplate": "toolfind://rich/note://{name}"' -- "${rich_args[@]}" \
  --method resources/templates/list
check "proxy resources/read" 'Hello, world.' -- "${rich_args[@]}" \
  --method resources/read --uri "toolfind://rich/note://hello"
check "own resources/read" 'merge_pdfs' -- "${rich_args[@]}" --method resources/read --uri "toolfind:deferred-tools"
check "proxy prompts/list" '"name": "rich__greet"' -- "${rich_args[@]}" --method prompts/list
check "proxy prompts/get" 'Say hello to Ann.' -- "${rich_args[@]}" \
  --method prompts/get --prompt-name rich__greet --prompt-args name=Ann
check "own prompts/get" 'merge_pdfs' -- "${rich_args[@]}" --method prompts/get --prompt-name deferred_tool_summaries
check "everything resources/list" '"uri": "toolfind://everything/' -- "${proxy_args[@]}" --method resources/list
check "everything prompts/list" '"name": "everything__' -- "${proxy_args[@]}" --method prompts/list
