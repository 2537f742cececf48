"""The facts of the deployment files, one query at a time, so that tests/e2e/deployment.sh can check each
against a running `ortkit serve`: the repository's Dockerfile and the KServe manifests in deploy/kserve/.

  python deployment_recipe.py SOURCE_DIR QUERY

Prints one fact a line, fields separated by tabs; exits 1 naming what the files lack. Queries:
  entrypoint         the Dockerfile's ENTRYPOINT argv, one a line
  expose             the Dockerfile's EXPOSE'd ports
  user               the Dockerfile's USER (the uid)
  path               the PATH of the Dockerfile's ENV
  runtime-argv       the ServingRuntime container's command + args, one a line
  runtime-user       the ServingRuntime container's securityContext.runAsUser
  container-ports    PORT NAME of the ServingRuntime container ('-' when unnamed)
  probes             KIND PATH PORT of each httpGet probe (the port resolved to a number)
  prometheus         PORT PATH of the prometheus.kserve.io annotations
  storage            RUNTIME FORMAT STORAGE_URI of the InferenceService's predictor model
  runtime-name       NAME FORMAT of the ServingRuntime and the model format it supports
  doc-quotes DOC     nothing when DOC's ```dockerfile and ```yaml blocks are the files, word for word
"""

import json
import os
import re
import shlex
import sys

import yaml


class RecipeError(Exception):
    pass


def dockerfile_instructions(text):
    """(INSTRUCTION, arguments) in order: continuation lines joined, comment lines dropped as Docker does."""
    instructions, pending = [], ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or (not pending and not line.strip()):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
    if pending:
        raise RecipeError("the Dockerfile ends inside a continued line")
    return instructions


def dockerfile_facts(source):
    with open(os.path.join(source, "Dockerfile")) as f:
        instructions = dockerfile_instructions(f.read())
    facts = {"expose": [], "env": {}, "entrypoint": None, "user": None}
    for keyword, arguments in instructions:
        if keyword == "EXPOSE":
            facts["expose"] += [port.split("/")[0] for port in arguments.split()]
        elif keyword == "ENV":
            for word in shlex.split(arguments):
                name, equals, value = word.partition("=")
                if not equals:
                    raise RecipeError(f"ENV {arguments}: only the NAME=VALUE form is understood")
                facts["env"][name] = value
        elif keyword == "USER":
            facts["user"] = arguments.split(":")[0]
        elif keyword == "ENTRYPOINT":
            if not arguments.startswith("["):
                raise RecipeError("ENTRYPOINT in shell form: signals would reach /bin/sh, not ortkit")
            facts["entrypoint"] = json.loads(arguments)
    if facts["entrypoint"] is None:
        raise RecipeError("the Dockerfile has no ENTRYPOINT")
    return facts


def manifests(source):
    folder = os.path.join(source, "deploy", "kserve")
    documents = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".yaml"):
            with open(os.path.join(folder, name)) as f:
                for document in yaml.safe_load_all(f):
                    if document:
                        documents.setdefault(document.get("kind"), []).append(document)
    for kind in ("ServingRuntime", "InferenceService"):
        if len(documents.get(kind, [])) != 1:
            raise RecipeError(f"expected one {kind} in deploy/kserve/*.yaml, found {len(documents.get(kind, []))}")
    return documents["ServingRuntime"][0], documents["InferenceService"][0]


def kserve_container(runtime):
    container = next((c for c in runtime["spec"].get("containers") or [] if c.get("name") == "kserve-container"), None)
    if container is None:
        raise RecipeError("the ServingRuntime has no container named kserve-container")
    return container


def resolve_port(port, container):
    if isinstance(port, int):
        return port
    for entry in container.get("ports") or []:
        if entry.get("name") == port:
            return entry["containerPort"]
    raise RecipeError(f"a probe names port '{port}', which the container does not declare")


def doc_quotes(source, doc):
    """The differences between DOC's fenced blocks and the files they quote."""
    with open(doc) as f:
        markdown = f.read()
    quoted = {"dockerfile": re.findall(r"^```dockerfile[ \t]*\n(.*?)^```", markdown, re.M | re.S),
              "yaml": re.findall(r"^```yaml[ \t]*\n(.*?)^```", markdown, re.M | re.S)}
    files = {"dockerfile": ["Dockerfile"],
             "yaml": sorted(os.path.join("deploy", "kserve", n) for n in os.listdir(os.path.join(source, "deploy", "kserve"))
                            if n.endswith(".yaml"))}
    problems = []
    for language, names in files.items():
        texts = [open(os.path.join(source, name)).read() for name in names]
        for name in names:
            if not any(block == open(os.path.join(source, name)).read() for block in quoted[language]):
                problems.append(f"{doc} does not quote {name} as it is (scripts/gen-docs.sh writes it)")
        for block in quoted[language]:
            if block not in texts:
                problems.append(f"{doc} has a ```{language} block that is none of {', '.join(names)}")
    return problems


def query(source, name, extra):
    if name == "doc-quotes":
        return doc_quotes(source, extra[0])
    if name in ("entrypoint", "expose", "user", "path"):
        facts = dockerfile_facts(source)
        if name == "path":
            return [facts["env"].get("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")]
        if name == "user":
            return [facts["user"] or "0"]
        return facts[name]
    runtime, service = manifests(source)
    container = kserve_container(runtime)
    spec = runtime["spec"]
    if name == "runtime-argv":
        return list(container.get("command") or []) + list(container.get("args") or [])
    if name == "runtime-user":
        return [str((container.get("securityContext") or {}).get("runAsUser", "-"))]
    if name == "container-ports":
        return [(p["containerPort"], p.get("name", "-")) for p in container.get("ports") or []]
    if name == "probes":
        return [(kind, container[kind]["httpGet"]["path"], resolve_port(container[kind]["httpGet"]["port"], container))
                for kind in ("startupProbe", "readinessProbe", "livenessProbe") if "httpGet" in container.get(kind, {})]
    if name == "prometheus":
        annotations = spec.get("annotations") or {}
        if "prometheus.kserve.io/port" not in annotations:
            raise RecipeError("the ServingRuntime has no prometheus.kserve.io/port annotation")
        return [(annotations["prometheus.kserve.io/port"], annotations.get("prometheus.kserve.io/path", "/metrics"))]
    if name == "storage":
        model = service["spec"]["predictor"]["model"]
        return [(model.get("runtime", "-"), model["modelFormat"]["name"], model["storageUri"])]
    if name == "runtime-name":
        return [(runtime["metadata"]["name"], f["name"]) for f in spec.get("supportedModelFormats") or []]
    raise RecipeError(f"unknown query '{name}'")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    source, name, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        facts = query(source, name, extra)
    except RecipeError as error:
        sys.exit(f"{name}: {error}")
    except (KeyError, TypeError, ValueError, IndexError, OSError, yaml.YAMLError) as error:
        sys.exit(f"{name}: {type(error).__name__}: {error}")
    if name == "doc-quotes" and facts:
        sys.exit("\n".join(facts))
    for fact in facts:
        print("\t".join(map(str, fact)) if isinstance(fact, tuple) else fact)


if __name__ == "__main__":
    main()
