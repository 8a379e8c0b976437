"""funes' agent installers: one module per agent, run by `funes add` / `funes remove`.

Shipped in the wheel as `funes/_bundled/installers` and loaded by funes from that path as the
package `_funes_installers` (funes never imports them as `installers`). Every module exposes:

    preflight(ctx: Context) -> None      InstallError when install would refuse a file
                                         (run before `funes add` writes anything)
    install(ctx: Context) -> Changes     idempotent: a second run writes nothing
    uninstall(ctx: Context) -> Changes   takes out exactly what install put in
    check(ctx: Context) -> Check         installed? and what would silently stop the hooks

Nothing here deletes a memory or a transcript.
"""
