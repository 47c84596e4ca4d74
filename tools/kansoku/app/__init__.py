"""The application layer: the one orchestrator of the stages.

``build_site`` (tools/build) and ``build_pdfs`` (tools/pdf) open the store once (read-only), ask
``report/`` for the computed reports (:class:`~kansoku.model.ComputedReport`) and hand them to the
renderers (``render.hugo``, ``render.typst``), which never see the store, a spec or a number to compute.
``preflight`` checks every spec before anything is computed (``spec.validate`` for the schema,
``analysis.spec_check`` for the names against the store, ``report.structure`` for the prose pages).
"""

from kansoku.app.build import BuildResult, build_pdf, build_pdfs, build_site, compute_one, compute_site, load_config
from kansoku.app.preflight import preflight

__all__ = ["BuildResult", "build_pdf", "build_pdfs", "build_site", "compute_one", "compute_site", "load_config",
           "preflight"]
