"""The typer application objects. Command modules import these and add commands to them.

Every command must have help text (a test walks the whole tree). Command modules import heavy
libraries inside the command function, so ``groundtrace --help`` stays fast.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="groundtrace",
    help="Accountable evidence: verbatim, checkable citations for recommenders (crs) and catalogs (catalog).",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
crs_app = typer.Typer(
    help="TRACE-CRS: knowledge base, dataset builder, systems, evaluation and reports.", no_args_is_help=True
)
kb_app = typer.Typer(
    help="Build or generate the TRACE-CRS knowledge base of POIs and reviews.", no_args_is_help=True
)
catalog_app = typer.Typer(
    help="TRACE-Catalog: import, enrich, judge and evaluate product attributes.", no_args_is_help=True
)

crs_app.add_typer(kb_app, name="kb")
app.add_typer(crs_app, name="crs")
app.add_typer(catalog_app, name="catalog")
