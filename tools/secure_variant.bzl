"""A target built again with the secure mode on (//:secure), whatever the
build's own flags: the drop-in's libpmr_malloc_secure.so beside
libpmr_malloc.so, so that a program picks the secure mode by what it
preloads (resources/README.md, "Secure mode")."""

# The flag's label as seen from this file's repository: "//:secure" here,
# "@pmr_c//:secure" from a workspace that uses pmr-c.
_SECURE = str(Label("//:secure"))

def _secure_transition_impl(settings, attr):
    return {_SECURE: True}

_secure_transition = transition(
    implementation = _secure_transition_impl,
    inputs = [],
    outputs = [_SECURE],
)

def _secure_variant_impl(ctx):
    src = ctx.files.src[0]
    out = ctx.actions.declare_file(ctx.attr.out)
    ctx.actions.symlink(output = out, target_file = src)
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

secure_variant = rule(
    implementation = _secure_variant_impl,
    doc = "The single file of `src`, built with --//:secure, as `out`.",
    attrs = {
        "src": attr.label(cfg = _secure_transition, allow_files = True, mandatory = True),
        "out": attr.string(mandatory = True),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)
