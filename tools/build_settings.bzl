"""A boolean build setting (a command-line flag such as --@pmr_c//:debug)."""

def _bool_flag_impl(ctx):
    # config_setting(flag_values = ...) reads the value itself.
    return []

bool_flag = rule(
    implementation = _bool_flag_impl,
    build_setting = config.bool(flag = True),
    doc = "A true/false flag: --LABEL (true), --noLABEL or --LABEL=false.",
)
