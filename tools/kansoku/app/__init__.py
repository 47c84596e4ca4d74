"""The application layer: the one orchestrator of the stages.

``build_site`` (tools/build) and ``build_pdfs`` (tools/pdf) open the store once (read-only), ask
``report/`` for the computed reports (:class:`~kansoku.model.ComputedReport`) and hand them to the
renderers (``render.hugo``, ``render.typst``), which never see the store, a spec or a number to compute.
``preflight`` checks every spec before anything is computed (``spec.validate`` for the schema,
``analysis.spec_check`` for the names against the store, ``report.structure`` for the prose pages).
"""

from kansoku.app.preflight import preflight

__all__ = ["BuildResult", "build_pdf", "build_pdfs", "build_site", "compute_one", "compute_site", "load_config",
           "preflight"]


def __getattr__(name: str):
    """The build's names, loaded from app/build.py when first used: ``preflight`` (a spec's problems, exit 3)
    does not load the build's renderers and charts (plotly). (``preflight`` is imported above, not here: the
    import of its module would bind the module, not the function, to ``kansoku.app.preflight``.)"""
    if name in __all__:
        from kansoku.app import build  # loaded on first use: importing kansoku.app loads no renderer

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
