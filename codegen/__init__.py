"""Code generation for metric-catalog: load -> validate -> lint -> render.

Run it as ``python -m codegen <command>``; ``python -m codegen --help`` lists
the commands. Nothing under ``src/metric_catalog`` imports this package.

Bad catalog input is never an exception: every stage reports
:class:`~codegen.diagnostics.Diagnostic` objects (their codes are listed in
:mod:`codegen.codes`). The exceptions are for what stops a command; each
subclasses a built-in, and the command line turns each into a message and an
exit status (2, or 1)::

    ValueError
    ├── codegen.config.ConfigError            [tool.metric-catalog] or a flag is unusable
    │   ├── codegen.config.NoCatalogError     the catalog matches no file
    │   ├── codegen.safe_fs.UnsafeOutputError  an output location resolves outside the project
    │   └── codegen.commands.init.PyprojectError   init cannot add the table to pyproject.toml
    ├── codegen.generate.PlanError            a renderer's output cannot be planned
    ├── codegen.render_templates.TemplateOutputError   an adopter's template output is unusable
    │   └── codegen.templating.TemplateSandboxError   refused by the sandbox; a ConfigError too
    ├── codegen.commands.diff.BaselineError   diff's baseline cannot be read
    ├── codegen.live_check.LogInputError      live-check's log paths cannot be read
    ├── codegen.live_check.ingest.trainer_state.TrainerStateError   caught: malformed
    ├── codegen.conditions.ConditionError     a condition over config uses what the language forbids
    └── codegen.emit.EmitError                emit cannot plan or send the sample run
    FileExistsError
    └── codegen.writer.HandWrittenFileError   generated output would replace a hand-written file
    OSError
    ├── codegen.safe_fs.NotRegularFileError   an input is a FIFO, device or link loop: not read
    ├── codegen.writer.WriteError             generate could not write; nothing was changed
    └── codegen.live_check.telemetry.ScrapeError   a live-check scrape endpoint cannot be read

The runtime's own (``metric_catalog``) are
:class:`~metric_catalog.series_rules.PatternError` (``ValueError``),
:class:`~metric_catalog.exporters.ExporterConfigError` (``ValueError``),
:class:`~metric_catalog.exporters.PrometheusPortsTakenError` (``OSError``) and
the warning category :class:`~metric_catalog.tee.MetricCatalogWarning`
(``UserWarning``); telemetry calls never raise into a training loop.
"""

__all__: list[str] = []
