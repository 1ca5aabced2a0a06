# Sourced by the suites that install our Go modules as a user would
# (tests/gomod, tests/cargo). use_test_goproxy PROXYDIR sets the Go
# environment of a user's machine except for where our modules come from:
# the test's file proxy (tools/cmd/gomodpublish wrote PROXYDIR) first, the
# machine's module cache read as a proxy, then the usual GOPROXY. Our
# modules skip the checksum database (GONOSUMDB), as any module before its
# first tag. Needs $root (the repository).
use_test_goproxy() {
  local proxy=$1 modprefix=github.com/agentfs-go/agentfs
  # Read the machine's settings before overriding them.
  local upstream hostcache cache proxies d
  upstream=$(go env GOPROXY)
  hostcache=$(go env GOMODCACHE)
  cache=${AGENTFS_GOMOD_CACHE:-$root/.cache/gomod}
  mkdir -p "$cache"
  # A clean module cache for our modules: anything an earlier run
  # extracted is another build of the same version number.
  for d in "$cache/$modprefix" "$cache/cache/download/$modprefix"; do
    if [ -e "$d" ]; then chmod -R u+w "$d"; rm -rf "$d"; fi
  done
  proxies="file://$proxy"
  if [ -d "$hostcache/cache/download" ] && [ "$hostcache" != "$cache" ]; then
    proxies="$proxies,file://$hostcache/cache/download"
  fi
  export GOPROXY="$proxies,$upstream"
  export GOMODCACHE=$cache
  export GONOSUMDB=$modprefix
  export GOTOOLCHAIN=local
  export GOFLAGS=-buildvcs=false
  # The go command indexes the files of a module-cache directory in the
  # build cache as if it could never change: true of a published version,
  # not of one these tests republish after every edit.
  export GODEBUG=goindex=0
}
