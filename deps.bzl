"""What a workspace that uses pmr-c needs, offline, in two WORKSPACE lines:

    local_repository(name = "pmr_c", path = "/path/to/pmr-c")
    load("@pmr_c//:deps.bzl", "pmr_c_deps"); pmr_c_deps()

pmr_c_deps() declares the repositories Bazel 4 would otherwise download for
any C/C++ build or test (rules_cc, rules_java, remote_coverage_tools,
platforms) as small local stand-ins shipped under third_party/, unless the
workspace declared them already (its own versions then win). The library
itself needs nothing else: libc and pthreads.
"""

load("@bazel_tools//tools/build_defs/repo:utils.bzl", "maybe")

def _shim_impl(rctx):
    # The stand-in's files, from pmr-c's own tree, wherever that tree is.
    root = rctx.path(rctx.attr._anchor).dirname
    src = root.get_child(rctx.attr.directory)
    if not src.exists:
        fail("pmr_c_deps: %s is missing" % src)
    for child in src.readdir():
        rctx.symlink(child, child.basename)

_shim = repository_rule(
    implementation = _shim_impl,
    attrs = {
        "directory": attr.string(mandatory = True),
        "_anchor": attr.label(default = Label("//third_party:BUILD.bazel")),
    },
    local = True,
)

def pmr_c_deps(platforms_path = "/usr/share/bazel/tools/platforms"):
    """Declares the repositories pmr-c's build needs, offline.

    Args:
      platforms_path: a local copy of @platforms (Debian's bazel-platforms
        package installs it at the default path).
    """
    maybe(_shim, name = "rules_cc", directory = "rules_cc")
    maybe(_shim, name = "rules_java", directory = "rules_java")
    maybe(_shim, name = "remote_coverage_tools", directory = "remote_coverage_tools")
    maybe(native.local_repository, name = "platforms", path = platforms_path)
