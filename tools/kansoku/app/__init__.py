"""The application layer: the one orchestrator of the stages.

``build_site`` (tools/build) and ``build_pdfs`` (tools/pdf) open the store once (read-only), ask
``report/`` for the computed reports (:class:`~kansoku.model.ComputedReport`) and hand them to the
renderers (``render.hugo``, ``render.typst``), which never see the store, a spec or a number to compute.
``preflight`` checks every spec before anything is computed (``spec.validate`` for the schema,
``analysis.spec_check`` for the names against the store, ``report.structure`` for the prose pages).
"""


__all__ = ["BuildResult", "build_pdf", "build_pdfs", "build_site", "compute_one", "compute_site", "load_config",
           "preflight"]


def __getattr__(name: str):
    """The names above, each loaded from its module when first used: ``preflight`` (a spec's problems, exit 3)
    does not load the build's renderers and charts (plotly), and a command's --help loads neither."""
    if name == "preflight":
        from kansoku.app.preflight import preflight

        return preflight
    if name in __all__:
        from kansoku.app import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
