"""A job of several loops: workers that each run a different loop, checked together.

NeMo-Aligner's PPO is two processes: the actor (rollouts, the policy update,
validation every few steps) and the critic server (a step per critic batch, many per
actor step). Checked together, each worker is judged as its own loop (named by its
records, or inferred from its own signature keys), each row by the steps and the
configuration of the loops that emit it: no ``loop_conflict``, no ``unexpected_loop``,
and the actor's validation is not due because the critic counted more steps.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.catalog.model import Catalog
from codegen.cli import main
from codegen.live_check import LiveCheckReport, check_paths, check_stream
from codegen.live_check.render import render_json, render_text
from tests.catalog_projects import loaded_catalog, write_catalog

CATALOG = """\
owner: ppo
module: ppo
description: An actor and a critic server, each a process of its own.
prefix: ""
loops:
  - name: actor
    description: The PPO actor.
    signature: [actor/loss]
  - name: critic
    description: The critic server.
    signature: [critic/loss]
  - name: grpo
    description: GRPO, whose signature PPO's extends.
    signature: [shared/reward]
  - name: ppo
    description: PPO in one process.
    signature: [shared/reward, ppo/value]
  - name: async
    description: An asynchronous GRPO, whose rank 0 also logs GRPO's reward.
    signature: [async/buffer, async/age]
teed:
  - logger_key: actor/loss
    name: rl.actor.loss
    kind: gauge
    unit: "1"
    description: The actor's loss.
    emitted_by: [actor]
    requirement_level: required
  - logger_key: val/reward
    name: rl.val.reward
    kind: gauge
    unit: "1"
    description: Validation reward, every val_every actor steps.
    emitted_by: [actor]
    requirement_level: required
    every: "config.val_every"
  - logger_key: actor/kl
    name: rl.actor.kl
    kind: gauge
    unit: "1"
    description: KL to the reference, when the actor's config uses it.
    emitted_by: [actor]
    requirement_level: conditionally_required
    condition: "config.use_kl"
  - logger_key: critic/loss
    name: rl.critic.loss
    kind: gauge
    unit: "1"
    description: The critic's loss.
    emitted_by: [critic]
    requirement_level: required
  - logger_key: critic/grad_norm
    name: rl.critic.grad_norm
    kind: gauge
    unit: "1"
    description: The critic's gradient norm.
    emitted_by: [critic]
    requirement_level: required
  - logger_key: shared/reward
    name: rl.shared.reward
    kind: gauge
    unit: "1"
    description: Reward, GRPO and PPO.
    emitted_by: [grpo, ppo]
    requirement_level: required
  - logger_key: ppo/value
    name: rl.ppo.value
    kind: gauge
    unit: "1"
    description: PPO's value estimate.
    emitted_by: [ppo]
    requirement_level: required
"""


@pytest.fixture(scope="module")
def actor_critic_catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The actor's and the critic server's rows of :data:`CATALOG`, each loop its own."""
    return loaded_catalog(tmp_path_factory.mktemp("job"), CATALOG, "ppo.yaml")


def write(
    path: Path,
    steps: range,
    metrics: dict[str, float],
    *,
    config: dict[str, Any] | None = None,
    loop: str | None = None,
) -> str:
    """A JSONL log: a configuration header (with its loop, if given), then one line a step."""
    named = {"loop": loop} if loop else {}
    lines: list[dict[str, Any]] = [] if config is None else [{"config": config, **named}]
    lines += [{"step": step, "prefix": "", "metrics": metrics, **named} for step in steps]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def kinds(report: LiveCheckReport) -> list[tuple[str, str]]:
    return sorted((f.kind, f.qualified_key) for f in report.findings)


def presence(report: LiveCheckReport) -> dict[str, str]:
    return {s.row.name: s.presence for s in report.rows}


ACTOR = {"actor/loss": 0.5}
CRITIC = {"critic/loss": 0.1, "critic/grad_norm": 1.0}


@pytest.mark.parametrize("named", [True, False], ids=["named", "inferred"])
def test_an_actor_and_a_critic_checked_together_are_judged_each_by_its_own_steps(
    actor_critic_catalog: Catalog, tmp_path: Path, *, named: bool
) -> None:
    """The critic logged 40 steps, the actor 5: validation (every 10 actor steps) is not
    due, whatever the critic's step count."""
    actor = write(
        tmp_path / "actor.jsonl",
        range(1, 6),
        ACTOR,
        config={"val_every": 10, "use_kl": False},
        **({"loop": "actor"} if named else {}),
    )
    critic = write(
        tmp_path / "critic.jsonl",
        range(1, 41),
        CRITIC,
        config={"lr": 1e-6},
        **({"loop": "critic"} if named else {}),
    )
    report = check_paths([actor, critic], actor_critic_catalog)
    assert kinds(report) == []
    assert [(j.name, j.inputs, j.first_step, j.last_step) for j in report.job_loops] == [
        ("actor", (actor,), 1, 5),
        ("critic", (critic,), 1, 40),
    ]
    assert {j.source for j in report.job_loops} == {"log" if named else "inferred"}
    states = presence(report)
    assert states["rl.val.reward"] == "not_due"  # by the actor's steps, not the critic's
    assert states["rl.actor.kl"] == "not_applicable"  # the actor's configuration decides
    assert states["rl.shared.reward"] == "not_emitted"
    assert not [n for n in report.notices if n.kind in ("unexpected_loop", "config_conflict")]
    (note,) = [n.message for n in report.notices if n.kind == "several_loops"]
    assert "actor (1 worker, steps 1 to 5" in note
    assert "critic (1 worker, steps 1 to 40" in note


def test_a_job_loop_still_lacks_the_rows_it_emits_and_its_workers_did_not_log(
    actor_critic_catalog: Catalog, tmp_path: Path
) -> None:
    """The job is not a way around presence: the critic worker logged no grad_norm, and
    the actor reached validation's step (10) without logging it."""
    actor = write(
        tmp_path / "actor.jsonl", range(1, 11), ACTOR, config={"val_every": 10}, loop="actor"
    )
    critic = write(
        tmp_path / "critic.jsonl", range(1, 41), {"critic/loss": 0.1}, config={}, loop="critic"
    )
    report = check_paths([actor, critic], actor_critic_catalog)
    missing = {f.qualified_key: f.example for f in report.findings if f.kind == "missing"}
    assert missing == {"critic/grad_norm": "critic", "val/reward": "actor"}


def test_each_loops_configuration_decides_its_own_rows(
    actor_critic_catalog: Catalog, tmp_path: Path
) -> None:
    """The critic's configuration says use_kl true; the actor's (false) decides actor/kl."""
    actor = write(tmp_path / "a.jsonl", range(1, 4), ACTOR, config={"use_kl": False}, loop="actor")
    critic = write(
        tmp_path / "c.jsonl", range(1, 4), CRITIC, config={"use_kl": True}, loop="critic"
    )
    for order in ([actor, critic], [critic, actor]):
        report = check_paths(order, actor_critic_catalog)
        assert presence(report)["rl.actor.kl"] == "not_applicable", order
        assert kinds(report) == []


def test_two_actor_workers_with_different_configurations_decide_nothing(
    actor_critic_catalog: Catalog, tmp_path: Path
) -> None:
    one = write(tmp_path / "a0.jsonl", range(1, 4), ACTOR, config={"use_kl": False}, loop="actor")
    two = write(tmp_path / "a1.jsonl", range(1, 4), ACTOR, config={"use_kl": True}, loop="actor")
    critic = write(tmp_path / "c.jsonl", range(1, 4), CRITIC, config={}, loop="critic")
    report = check_paths([one, two, critic], actor_critic_catalog)
    assert presence(report)["rl.actor.kl"] == "conditional"  # undecided, never missing
    assert kinds(report) == []


def test_a_worker_of_a_loop_another_extends_is_that_loop_not_a_job(
    actor_critic_catalog: Catalog, tmp_path: Path
) -> None:
    """A PPO rank that logged only GRPO's signature keys is inferred as GRPO on its own;
    beside a rank that logged PPO's, the run is one PPO run."""
    full = write(tmp_path / "r0.jsonl", range(1, 4), {"shared/reward": 1.0, "ppo/value": 0.5})
    part = write(tmp_path / "r1.jsonl", range(1, 4), {"shared/reward": 1.0})
    report = check_paths([full, part], actor_critic_catalog)
    assert report.job_loops == ()
    assert report.loop.name == "ppo"
    assert kinds(report) == []


def test_a_forced_loop_is_one_loop_for_every_worker(
    actor_critic_catalog: Catalog, tmp_path: Path
) -> None:
    actor = write(tmp_path / "a.jsonl", range(1, 4), ACTOR, config={}, loop="actor")
    critic = write(tmp_path / "c.jsonl", range(1, 4), CRITIC, config={}, loop="critic")
    report = check_paths([actor, critic], actor_critic_catalog, loop="actor")
    assert report.job_loops == ()
    assert report.loop.name == "actor"
    assert any(n.kind == "unexpected_loop" for n in report.notices)  # the critic's rows


def test_one_input_of_one_loop_is_no_job(actor_critic_catalog: Catalog) -> None:
    raw = b'{"step": 1, "prefix": "", "metrics": {"actor/loss": 0.5}}\n'
    report = check_stream(io.BytesIO(raw), actor_critic_catalog)
    assert report.job_loops == ()
    assert json.loads(render_json(report))["job_loops"] == []


def test_the_reports_name_each_loop_its_workers_and_steps(
    actor_critic_catalog: Catalog, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    actor = write(tmp_path / "a.jsonl", range(1, 6), ACTOR, config={}, loop="actor")
    critic = write(tmp_path / "c.jsonl", range(1, 41), CRITIC, config={}, loop="critic")
    report = check_paths([actor, critic], actor_critic_catalog)
    doc = json.loads(render_json(report))
    assert doc["job_loops"] == [
        {"name": "actor", "source": "log", "workers": [actor], "first_step": 1, "last_step": 5},
        {"name": "critic", "source": "log", "workers": [critic], "first_step": 1, "last_step": 40},
    ]
    text = render_text(report)
    assert "loops (a job of several): actor (1 worker, steps 1 to 5; named by the log)" in text
    root = write_catalog(tmp_path / "project", CATALOG, "ppo.yaml")
    assert main(["live-check", actor, critic, "--root", str(root), "--fail-on", "missing"]) == 0
    assert "info[SEVERAL_LOOPS]" in capsys.readouterr().out


def test_a_log_naming_a_new_worker_on_every_line_is_capped(
    actor_critic_catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile input: each distinct "worker" value is state; past the cap, lines are judged
    as their input's unnamed worker and a notice counts them."""
    monkeypatch.setattr("codegen.live_check.MAX_WORKERS", 3)
    path = tmp_path / "many.jsonl"
    lines = [
        {"step": 1, "prefix": "", "metrics": ACTOR, "worker": f"w{n}", "loop": "actor"}
        for n in range(50)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    other = write(tmp_path / "c.jsonl", range(1, 3), CRITIC, loop="critic")
    report = check_paths([str(path), other], actor_critic_catalog)
    (note,) = [n.message for n in report.notices if n.kind == "workers_capped"]
    assert note.startswith("47 record(s) named a worker after the first 3 workers")  # w3..w49
    assert kinds(report) == []
    assert {j.name for j in report.job_loops} == {"actor", "critic"}


def test_ranks_that_logged_different_parts_of_one_loops_keys_are_no_job(
    actor_critic_catalog: Catalog, tmp_path: Path
) -> None:
    """Rank 0 logged the async loop's keys and the reward; rank 1 only the reward, which
    on its own infers GRPO. Rank 0's keys span both loops: one run, judged as before."""
    keys = {"async/buffer": 3.0, "async/age": 1.0, "shared/reward": 1.0}
    full = write(tmp_path / "r0.jsonl", range(1, 4), keys)
    part = write(tmp_path / "r1.jsonl", range(1, 4), {"shared/reward": 1.0})
    report = check_paths([full, part], actor_critic_catalog)
    assert report.job_loops == ()
    assert report.loop.name == "async"


ACTOR_KEYS = ("actor/loss", "val/reward", "actor/kl")
CRITIC_KEYS = ("critic/loss", "critic/grad_norm")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    actor_steps=st.integers(1, 12),
    critic_steps=st.integers(1, 40),
    val_every=st.integers(1, 8),
    use_kl=st.booleans(),
    actor_logs=st.sets(st.sampled_from(ACTOR_KEYS)),
    critic_logs=st.sets(st.sampled_from(CRITIC_KEYS)),
)
def test_a_job_checked_together_judges_each_row_as_its_own_loop_checked_alone(
    actor_critic_catalog: Catalog,
    tmp_path_factory: pytest.TempPathFactory,
    actor_steps: int,
    critic_steps: int,
    val_every: int,
    *,
    use_kl: bool,
    actor_logs: set[str],
    critic_logs: set[str],
) -> None:
    """The invariant: a row's presence and findings in the job are what checking the log of
    the loop that emits it alone gives (no step count or configuration leaks across)."""
    folder = tmp_path_factory.mktemp("job")
    actor = write(
        folder / "actor.jsonl",
        range(1, actor_steps + 1),
        dict.fromkeys(sorted(actor_logs), 0.5) or {"actor/other": 1.0},
        config={"val_every": val_every, "use_kl": use_kl},
        loop="actor",
    )
    critic = write(
        folder / "critic.jsonl",
        range(1, critic_steps + 1),
        dict.fromkeys(sorted(critic_logs), 0.5) or {"critic/other": 1.0},
        config={"val_every": 1, "use_kl": not use_kl},
        loop="critic",
    )
    together = check_paths([actor, critic], actor_critic_catalog)
    alone = {
        "actor": check_paths([actor], actor_critic_catalog),
        "critic": check_paths([critic], actor_critic_catalog),
    }
    for summary in together.rows:
        owner = summary.row.emitted_by[0] if summary.row.emitted_by else None
        if owner not in alone:
            continue
        mine = next(s for s in alone[owner].rows if s.row.name == summary.row.name)
        assert summary.presence == mine.presence, summary.row.name
    assert kinds(together) == sorted(set(kinds(alone["actor"])) | set(kinds(alone["critic"])))
