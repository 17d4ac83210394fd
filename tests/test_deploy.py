"""deploy/ checked offline: no container engine or cluster runs here.

- every YAML file parses;
- compose.yaml validates against the Compose specification schema, as vendored by
  check-jsonschema (``--builtin-schema vendor.compose-spec``);
- the Kubernetes manifests validate, strictly (unknown fields fail), against the
  Kubernetes JSON schemas that kubernetes-validate bundles, for the oldest and newest
  Kubernetes version this repository supports;
- the Collector configurations name only components they define, of types the contrib
  distribution ships (KNOWN_COMPONENTS below);
- the launcher's environment-file reader and command line.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COLLECTOR_CONFIGS = [DEPLOY / "otel-collector.yaml", DEPLOY / "otel-collector-fleet.yaml"]
# The oldest Kubernetes minor the manifests target (PDB policy/v1, HPA autoscaling/v2 and
# Job ttlSecondsAfterFinished are all GA there), and the newest kubernetes-validate bundles.
OLDEST_K8S = "1.30.0"

# Component types the configurations may use, by section. Sources: the research notes
# (shared/research/otel.md §7: otlp receiver, memory_limiter, batch, redaction,
# tail_sampling, probabilistic_sampler, otlp_http and its deprecated alias otlphttp) and
# the contrib READMEs they cite: load_balancing (renamed from loadbalancing, kept as a
# deprecated alias, contrib PR 48533, May 2026), the OTLP/gRPC exporter otlp, debug, and
# the health_check extension. All of them ship in otel/opentelemetry-collector-contrib.
KNOWN_COMPONENTS: Mapping[str, frozenset[str]] = {
    "receivers": frozenset({"otlp"}),
    "processors": frozenset(
        {"memory_limiter", "batch", "redaction", "tail_sampling", "probabilistic_sampler"}
    ),
    "exporters": frozenset(
        {"otlp", "otlp_http", "otlphttp", "load_balancing", "loadbalancing", "debug"}
    ),
    "extensions": frozenset({"health_check"}),
}
PIPELINE_SECTIONS = {"receivers": "receivers", "processors": "processors", "exporters": "exporters"}


def yaml_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yaml", ".yml"))


def load_all(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def manifests() -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in sorted(K8S.glob("*.yaml")):
        for doc in load_all(path):
            yield path, doc


def by_kind(kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for _, d in manifests() if d["kind"] == kind}


# --- YAML ------------------------------------------------------------------------------


def test_every_yaml_file_parses() -> None:
    files = yaml_files()
    assert {p.relative_to(DEPLOY).as_posix() for p in files} >= {
        "compose.yaml",
        "otel-collector.yaml",
        "otel-collector-fleet.yaml",
        "k8s/config.yaml",
        "k8s/serve.yaml",
        "k8s/worker.yaml",
        "k8s/migrate-job.yaml",
        "k8s/collector.yaml",
    }
    for path in files:
        assert load_all(path), f"{path} is empty"


# --- compose ---------------------------------------------------------------------------


def test_compose_validates_against_the_compose_specification_schema() -> None:
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.compose-spec",
            str(DEPLOY / "compose.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compose_schema_check_catches_a_mistake(tmp_path: Path) -> None:
    """A negative control: the validator rejects what the specification does not allow."""
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[dev]')")
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    compose["services"]["serve-a"]["restart_policy"] = "always"  # not a service key
    broken = tmp_path / "compose.yaml"
    broken.write_text(yaml.safe_dump(compose))
    done = subprocess.run(
        [
            *(sys.executable, "-m", "check_jsonschema"),
            *("--builtin-schema", "vendor.compose-spec", str(broken)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0


def test_compose_runs_the_fleet() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert services["migrate"]["command"] == ["db", "upgrade"]
    receivers = sorted(n for n, s in services.items() if s.get("command", [None])[0] == "serve")
    workers = sorted(n for n, s in services.items() if s.get("command") == ["worker"])
    assert receivers == ["serve-a", "serve-b"]
    assert len(workers) == 2
    for name in receivers + workers:
        service = services[name]
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert service["init"] is True  # SIGTERM reaches faithmon
        assert "data:/data" in service["volumes"]
    for name in workers:
        assert services[name]["healthcheck"]["test"] == ["CMD", "faithmon", "worker", "--check"]
    # The receivers start only once the first admin key and the collector's key are stored.
    for name, scopes in (("admin-key", "admin"), ("collector-key", "ingest")):
        command = services[name]["command"]
        assert command[:4] == ["keys", "create", "--scopes", scopes]
        assert "--key-from-env" in command
    for name in receivers:
        assert services[name]["depends_on"]["collector-key"]["condition"] == (
            "service_completed_successfully"
        )
        assert services[name]["environment"]["FAITHMON_AUTH"] == "required"
    fleet = yaml.safe_load((DEPLOY / "otel-collector-fleet.yaml").read_text())
    otlp = fleet["exporters"]["load_balancing/faithmon"]["protocol"]["otlp"]
    assert otlp["headers"]["authorization"] == "Bearer ${env:FAITHMON_COLLECTOR_KEY}"
    assert "FAITHMON_COLLECTOR_KEY" in services["otel-collector"]["environment"]
    for name in receivers:
        command = services[name]["command"]
        assert command[command.index("--grpc-port") + 1] == "4317"
        assert "/healthz" in " ".join(services[name]["healthcheck"]["test"])
        assert "ports" not in services[name]  # only the collector reaches the receivers

    collector = services["otel-collector"]
    image, _, tag = collector["image"].partition(":")
    assert image == "otel/opentelemetry-collector-contrib"
    assert re.fullmatch(r"\d+\.\d+\.\d+", tag), f"pin the collector image: {tag!r}"
    assert "./otel-collector-fleet.yaml:/etc/otelcol-contrib/config.yaml:ro" in collector["volumes"]
    assert "data" in compose["volumes"]

    # The collector's static resolver lists exactly these receivers, on their gRPC port.
    config = yaml.safe_load((DEPLOY / "otel-collector-fleet.yaml").read_text())
    exporter = config["exporters"]["load_balancing/faithmon"]
    assert exporter["resolver"]["static"]["hostnames"] == [f"{n}:4317" for n in receivers]


# --- Kubernetes ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kubernetes_validate() -> Any:
    return pytest.importorskip(
        "kubernetes_validate", reason="kubernetes-validate is not installed (pip install -e .[dev])"
    )


def k8s_versions(kv: Any) -> list[str]:
    return sorted({OLDEST_K8S, kv.utils.latest_version()})


def test_kubernetes_manifests_validate_offline(kubernetes_validate: Any) -> None:
    docs = list(manifests())
    assert len(docs) >= 12
    for version in k8s_versions(kubernetes_validate):
        for path, doc in docs:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                name = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
                pytest.fail(f"{path.name}: {name} invalid for Kubernetes {version}: {exc}")


def test_the_kubernetes_check_catches_a_mistake(kubernetes_validate: Any) -> None:
    """A negative control: a misspelt field fails strict validation."""
    deployment = by_kind("Deployment")["faithmon-serve"]
    broken = yaml.safe_load(yaml.safe_dump(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGett"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, kubernetes_validate.utils.latest_version(), True)


def test_kubernetes_objects_are_labelled_and_namespace_less() -> None:
    kinds = set()
    for path, doc in manifests():
        kinds.add(doc["kind"])
        metadata = doc["metadata"]
        assert "namespace" not in metadata, path
        assert metadata["labels"]["app.kubernetes.io/name"] == "faithmon", path
        assert metadata["labels"]["app.kubernetes.io/part-of"] == "faithmon", path
    assert kinds >= {
        "ConfigMap",
        "Secret",
        "Deployment",
        "Job",
        "Service",
        "PodDisruptionBudget",
        "HorizontalPodAutoscaler",
    }


def containers() -> Iterator[tuple[str, dict[str, Any]]]:
    for kind in ("Deployment", "Job"):
        for name, doc in by_kind(kind).items():
            pod = doc["spec"]["template"]["spec"]
            for container in pod.get("initContainers", []) + pod["containers"]:
                yield name, container


def test_every_container_has_requests_and_limits_and_runs_locked_down() -> None:
    for name, container in containers():
        resources = container["resources"]
        assert set(resources["requests"]) == {"cpu", "memory"}, name
        assert set(resources["limits"]) == {"cpu", "memory"}, name
        security = container["securityContext"]
        assert security["allowPrivilegeEscalation"] is False, name
        assert security["readOnlyRootFilesystem"] is True, name


def test_receiver_probes_do_not_restart_a_receiver_waiting_for_the_database() -> None:
    serve = by_kind("Deployment")["faithmon-serve"]["spec"]["template"]["spec"]
    (container,) = serve["containers"]
    assert container["args"][0] == "serve"
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    liveness = container["livenessProbe"]
    # /healthz answers 503 while the store is down: liveness must not use it.
    assert "tcpSocket" in liveness and "httpGet" not in liveness
    assert liveness["failureThreshold"] * liveness["periodSeconds"] >= 120
    assert serve["terminationGracePeriodSeconds"] >= 60
    text = (K8S / "serve.yaml").read_text()
    assert "503 while the DATABASE is" in text  # the comment that says why


def test_worker_probes_use_the_heartbeat_check() -> None:
    worker = by_kind("Deployment")["faithmon-worker"]["spec"]["template"]["spec"]
    (container,) = worker["containers"]
    assert container["args"] == ["worker"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["exec"]["command"] == ["faithmon", "worker", "--check"], probe
    config = by_kind("ConfigMap")["faithmon-config"]["data"]
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert str(Path(config["FAITHMON_WORKER_HEARTBEAT_FILE"]).parent) in mounts


def test_migration_job_config_secret_pdb_and_autoscalers() -> None:
    job = by_kind("Job")["faithmon-migrate"]
    pod = job["spec"]["template"]["spec"]
    # The schema first, then the first admin key, then the collector's ingest key.
    steps = [c["args"] for c in pod["initContainers"] + pod["containers"]]
    assert steps[0] == ["db", "upgrade"]
    assert [a[:4] for a in steps[1:]] == [
        ["keys", "create", "--scopes", "admin"],
        ["keys", "create", "--scopes", "ingest"],
    ]
    assert [a[-1] for a in steps[1:]] == ["FAITHMON_ADMIN_KEY", "FAITHMON_COLLECTOR_KEY"]
    secret = by_kind("Secret")["faithmon-secrets"]["stringData"]
    assert set(secret) == {
        "FAITHMON_DATABASE_URL",
        "FAITHMON_SCRUB_KEY",
        "FAITHMON_JUDGE_API_KEY",
        "FAITHMON_ADMIN_KEY",
        "FAITHMON_COLLECTOR_KEY",
    }
    assert all("CHANGE-ME" in value for value in secret.values())  # placeholders only
    config = by_kind("ConfigMap")["faithmon-config"]["data"]
    assert all(key.startswith("FAITHMON_") for key in config)
    assert not set(config) & set(secret)
    env_example = (DEPLOY / ".env.example").read_text()
    for key in config:
        assert f"\n{key}=" in env_example, f"{key} is not a faithmon setting"
    for _, container in containers():
        if container["name"] == "otelcol":
            continue
        refs = {r.get("configMapRef", r.get("secretRef", {}))["name"] for r in container["envFrom"]}
        assert refs == {"faithmon-config", "faithmon-secrets"}
    pdbs = by_kind("PodDisruptionBudget")
    assert set(pdbs) == {"faithmon-serve", "faithmon-worker"}
    hpas = by_kind("HorizontalPodAutoscaler")
    serve_metric = hpas["faithmon-serve"]["spec"]["metrics"][0]
    assert serve_metric["resource"]["name"] == "cpu"
    assert hpas["faithmon-worker"]["spec"]["metrics"][0]["external"]["metric"]["name"] == (
        "faithmon_queue_depth"
    )


# --- Collector configurations ----------------------------------------------------------


def collector_configs() -> list[tuple[str, dict[str, Any]]]:
    configs = [(p.name, yaml.safe_load(p.read_text())) for p in COLLECTOR_CONFIGS]
    embedded = by_kind("ConfigMap")["faithmon-collector"]["data"]["config.yaml"]
    configs.append(("k8s/collector.yaml", yaml.safe_load(embedded)))
    return configs


def component_type(name: str) -> str:
    return name.split("/", 1)[0]


@pytest.mark.parametrize(("name", "config"), collector_configs(), ids=lambda v: str(v)[:30])
def test_collector_config_names_only_defined_known_components(
    name: str, config: dict[str, Any]
) -> None:
    for section, known in KNOWN_COMPONENTS.items():
        for component in config.get(section) or {}:
            assert component_type(component) in known, f"{name}: unknown {section} {component}"
    service = config["service"]
    for extension in service.get("extensions", []):
        assert extension in config["extensions"], f"{name}: extension {extension} undefined"
    pipelines = service["pipelines"]
    assert "traces" in pipelines
    for pipeline_name, pipeline in pipelines.items():
        assert component_type(pipeline_name) in ("traces", "logs", "metrics"), pipeline_name
        assert pipeline["receivers"] and pipeline["exporters"], pipeline_name
        for key, section in PIPELINE_SECTIONS.items():
            for component in pipeline.get(key, []):
                assert component in (config.get(section) or {}), (
                    f"{name}: {pipeline_name} uses {component}, not defined under {section}"
                )
        processors = pipeline.get("processors", [])
        # memory_limiter first, batch last: the order the collector's docs recommend.
        assert processors[0] == "memory_limiter" and processors[-1] == "batch", name


def test_fleet_collectors_route_by_trace_id_over_grpc() -> None:
    for name, config in collector_configs():
        exporters = config["exporters"]
        (used,) = config["service"]["pipelines"]["traces"]["exporters"]
        if name == "otel-collector.yaml":
            assert component_type(used) == "otlp_http"  # one receiver: no routing needed
            assert exporters[used]["encoding"] == "proto"
            continue
        assert component_type(used) == "load_balancing", name
        exporter = exporters[used]
        assert exporter["routing_key"] == "traceID", name
        assert set(exporter["protocol"]) == {"otlp"}, name  # OTLP/gRPC, faithmon's 4317
        (resolver,) = exporter["resolver"].values()
        ports = (
            {int(h.rsplit(":", 1)[1]) for h in resolver["hostnames"]}
            if "hostnames" in resolver
            else {resolver["port"]}
        )
        assert ports == {4317}, name


# --- Dockerfile and launcher -----------------------------------------------------------


def test_dockerfile_is_multi_stage_pinned_non_root_with_a_health_check() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert len(re.findall(r"^FROM ", text, flags=re.MULTILINE)) == 2
    base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", text, flags=re.MULTILINE)
    assert base is not None and re.fullmatch(r"python:3\.\d+-slim", base.group(1))
    assert re.search(r"^USER faithmon$", text, flags=re.MULTILINE)
    assert "HEALTHCHECK" in text and "faithmon-healthcheck" in text
    assert (DEPLOY / "healthcheck.py").exists()


def load_module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_health_check_picks_the_check_from_the_command_line() -> None:
    health = load_module(DEPLOY / "healthcheck.py", "faithmon_healthcheck")
    assert health.check(["/sbin/docker-init", "--", "faithmon", "db", "upgrade"]) == 0
    # Nothing listens on port 1: the serve check fails, naming why.
    assert health.check(["faithmon", "serve", "--host", "0.0.0.0", "--port", "1"]) == 1


def test_launcher_reads_env_files_and_documents_its_options(tmp_path: Path) -> None:
    launch = load_module(DEPLOY / "launch.py", "faithmon_launch_cli")
    values = launch.read_env_file(DEPLOY / ".env.example")
    assert values["FAITHMON_DATABASE_URL"] == ""  # unset: faithmon.db in the data dir
    assert values["FAITHMON_SCRUB_KEY"] == ""
    quoted = tmp_path / "env"
    quoted.write_text("# comment\nexport A='x y'\nB=\"2\"\n\nC=a=b\n")
    assert launch.read_env_file(quoted) == {"A": "x y", "B": "2", "C": "a=b"}
    done = subprocess.run(
        [sys.executable, str(DEPLOY / "launch.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    for option in ("--receivers", "--workers", "--base-port", "--env-file", "--grpc-base-port"):
        assert option in done.stdout
    fleet = launch.Fleet(receivers=2, workers=3, base_port=5000, env={}, run_dir=tmp_path)
    assert fleet.urls == ["http://127.0.0.1:5000", "http://127.0.0.1:5001"]
    heartbeats = {m.env["FAITHMON_WORKER_HEARTBEAT_FILE"] for m in fleet.worker_members}
    assert len(heartbeats) == 3
