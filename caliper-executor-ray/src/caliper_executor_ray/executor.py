"""The ``ray`` executor: ``caliper run SPEC --executor ray [--ray-address ADDRESS]``.

:meth:`RayExecutor.start` packs each engine's secret-free bundle
(:class:`caliper.plugin.executor.RunBundle`), connects to the cluster and puts each bundle in
Ray's object store once, then runs a pre-flight task (:func:`caliper.remote.check_node`) on
every alive node that has CPUs: the spec must be valid there, the engine's CLI installed and
ready, and every ``${VAR}`` the spec's ``mcp:`` servers use set in the node's environment.
Any node that fails stops the run before the first attempt, with one
:class:`~caliper.errors.SetupError` (exit 3) naming each such node and what to install or set
(a node is not silently left out: attempts would then depend on which nodes happen to be up).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from caliper.plugin import SetupError, UsageError
from caliper.plugin.executor import Executor, ExecutorOption, ExecutorSession, RunWork

ADDRESS_OPTION = ExecutorOption(
    name="address",
    help="the Ray cluster: auto (one started on this machine), HOST:PORT or ray://HOST:PORT",
    default="auto",
)
PREFLIGHT_SECONDS = 300.0


class RayExecutor(Executor):
    """Runs each attempt as a Ray task on a cluster's nodes."""

    id = "ray"
    description = "each attempt as a Ray task on a cluster (caliper-executor-ray)"
    options = (ADDRESS_OPTION,)

    def start(self, work: RunWork, settings: Mapping[str, str]) -> ExecutorSession:
        """Connect, ship the bundles, check every node; the session that runs the jobs."""
        for bundle in work.bundles.values():
            if bundle.keep_workdirs:
                raise UsageError(
                    "--keep-workdirs cannot be used with --executor ray: the working "
                    "directories are on the cluster's nodes.",
                    hint="Run without --keep-workdirs, or with --executor local.",
                )
        for bundle in work.bundles.values():
            bundle.payload()  # packed before connecting: a spec folder too large is exit 2
        from caliper_executor_ray.connect import connect

        ray, connected = connect(settings.get("address") or ADDRESS_OPTION.default or "auto")
        try:
            bundles = {key: ray.put(bundle) for key, bundle in work.bundles.items()}
            for key, ref in bundles.items():
                warn_on_mixed_versions(preflight(ray, ref, work.bundles[key].engine))
            from caliper_executor_ray.session import RaySession

            return RaySession(ray, work, bundles, connected)
        except BaseException:
            if connected:
                ray.shutdown()
            raise


def _alive_nodes(ray: Any) -> list[dict[str, Any]]:
    return [
        node
        for node in ray.nodes()
        if node.get("Alive") and float(node.get("Resources", {}).get("CPU", 0)) > 0
    ]


def preflight(ray: Any, bundle: Any, engine: str) -> dict[str, str | None]:
    """Check every alive node with CPUs can run the bundle's attempts; return the CLI version
    found on each node. Raises :class:`SetupError` naming every node that cannot."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from caliper_executor_ray.remote import check_node

    nodes = _alive_nodes(ray)
    if not nodes:
        raise SetupError(
            "--executor ray: the cluster has no alive node with CPUs to run attempts on.",
            hint="Start a node with `ray start --address HEAD:6379 --num-cpus N`.",
        )
    refs = {
        check_node.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
        ).remote(bundle): node
        for node in nodes
    }
    try:
        answers = ray.get(list(refs), timeout=PREFLIGHT_SECONDS)
    except Exception as exc:
        raise SetupError(
            f"--executor ray: the pre-flight check on the cluster's nodes failed: {exc}",
            hint="Check that every node has the same caliper-eval[ray] version installed "
            "(`ray status` lists the nodes).",
        ) from None
    problems = [(label, problem) for label, problem, _version in answers if problem]
    if problems:
        lines = [f"node {label}: {problem}" for label, problem in problems]
        raise SetupError(
            f"--executor ray: {len(problems)} of {len(answers)} node(s) cannot run "
            f"--model {engine}:\n" + "\n".join(lines),
            hint="Every node needs the agent CLI and its login, and the spec's ${VAR} "
            "variables set where `ray start` runs (docs/scaling.md has the checklist).",
        )
    return {label: version for label, _problem, version in answers}


def warn_on_mixed_versions(versions: Mapping[str, str | None]) -> None:
    """Say on stderr when the nodes run different versions of the agent CLI (the run's
    metadata records one)."""
    found = sorted({version for version in versions.values() if version})
    if len(found) <= 1:
        return
    import click

    listing = "; ".join(f"{node}: {version or 'unknown'}" for node, version in versions.items())
    click.echo(
        click.style("Warning: ", fg="yellow")
        + f"the nodes run different agent CLI versions ({listing}); results may mix them.",
        err=True,
    )
