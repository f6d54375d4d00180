"""Code generation for metric-catalog: load -> validate -> lint -> render.

Run it as ``python -m codegen <command>``; ``python -m codegen --help`` lists
the commands. Nothing under ``src/metric_catalog`` imports this package.

Bad catalog input is never an exception: every stage reports
:class:`~codegen.catalog.diagnostics.Diagnostic` objects (their codes are listed in
:mod:`codegen.codes`). The exceptions are for what stops a command; each
subclasses a built-in, and the command line turns each into a message and an
exit status (2, or 1). Relative to ``codegen``::

    ValueError
    ├── config.ConfigError                  [tool.metric-catalog] or a flag is unusable
    │   ├── config.NoCatalogError           the catalog matches no file
    │   ├── safe_outputs.UnsafeOutputError  an output location resolves outside the project
    │   └── commands.init.PyprojectError    init cannot add the table to pyproject.toml
    ├── generate.plan.PlanError             a renderer's output cannot be planned
    ├── generate.outputs.TemplateOutputError    an adopter's template output is unusable
    │   └── generate.templating.TemplateSandboxError   refused by the sandbox; a ConfigError too
    ├── commands.UsageError                 flags that do not go together (exit 2)
    ├── commands.diff.BaselineError         diff's baseline cannot be read
    ├── live_check.LogInputError            live-check's log paths cannot be read
    ├── runs.ingest.trainer_state.TrainerStateError   caught: malformed
    ├── catalog.conditions.ConditionError   a condition uses what the language forbids
    ├── safe_yaml.YamlBombError             a YAML file too large once its aliases expand
    ├── scan.keyfilter._UnknownError        caught: a key filter scan cannot evaluate
    ├── commands.scan._CatalogError         caught: scan's catalog did not load (printed)
    └── emit.EmitError                      emit cannot plan or send the sample run
    RuntimeError
    └── scan.keyfilter._SpentError          caught: a key filter spent its step budget
    FileExistsError
    └── generate.writer.HandWrittenFileError   output would replace a hand-written file
    OSError
    ├── safe_fs.NotRegularFileError         an input is a FIFO, device or link loop: not read
    │   └── safe_fs.OutsideRootError        a member of a folder named resolves outside it
    ├── generate.writer.WriteError          generate could not write; nothing was changed
    └── runs.telemetry.ScrapeError          a live-check scrape endpoint cannot be read

The runtime's own (``metric_catalog``) are
:class:`~metric_catalog.series_rules.PatternError` (``ValueError``),
:class:`~metric_catalog.exporters.ExporterConfigError` (``ValueError``),
:class:`~metric_catalog.exporters.PrometheusPortsTakenError` (``OSError``) and
the warning category :class:`~metric_catalog.tee.MetricCatalogWarning`
(``UserWarning``); telemetry calls never raise into a training loop.
"""

__all__: list[str] = []
