"""The facts of the deployment recipe in a markdown file (docs/deployment.md): its ```dockerfile block
and its ```yaml block (KServe ServingRuntime), one query at a time, so that tests/e2e/deployment.sh
can check each against the source tree, the Debian archive and a running `ortkit serve`.

  python deployment_recipe.py DOC QUERY

Prints one fact a line, fields separated by tabs; exits 1 naming what the recipe lacks. Queries:
  stages             NAME BASE of each FROM (NAME: the AS name, or the stage's index)
  build-env          VAR SCRIPT: VAR=... set before a script run in the build stage
  build-programs     the other programs the build stage runs (cmake, ninja, ...)
  cmake-options      NAME VALUE of each -DNAME=VALUE
  cmake-dirs         SOURCE BUILD: cmake's -S and -B, absolute (against WORKDIR)
  ninja-targets      the targets of `ninja -C DIR TARGET...`
  workdir            the build stage's WORKDIR
  copies             STAGE FROM SRC DEST of each COPY (FROM: the --from stage, or '-' for the context)
  run-packages       the packages of the run stage's `apt-get install`
  env                NAME VALUE of the run stage's ENV
  expose             the run stage's EXPOSE'd ports
  entrypoint         the run stage's ENTRYPOINT argv, one a line
  docker-run-ports   HOST CONTAINER of each -p in the prose's `docker run` example
  runtime-argv       the ServingRuntime container's command + args, one a line
  container-ports    PORT NAME of the ServingRuntime container ('-' when unnamed)
  probes             KIND PATH PORT of each httpGet probe (the port resolved to a number)
  prometheus         PORT PATH of the prometheus.kserve.io annotations
"""

import json
import posixpath
import re
import shlex
import sys

import yaml


ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class RecipeError(Exception):
    pass


def fenced_block(markdown, language):
    blocks = re.findall(r"^```" + language + r"[ \t]*\n(.*?)^```", markdown, re.M | re.S)
    if len(blocks) != 1:
        raise RecipeError(f"expected one ```{language} block, found {len(blocks)}")
    return blocks[0]


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


class Stage:
    def __init__(self, name, base):
        self.name, self.base = name, base
        self.workdir = "/"
        self.runs, self.copies, self.env, self.expose, self.entrypoint = [], [], [], [], None


def stages_of(instructions):
    stages = []
    for keyword, arguments in instructions:
        if keyword == "FROM":
            words = arguments.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(stages))
            stages.append(Stage(name, words[0]))
            continue
        if not stages:
            raise RecipeError(f"{keyword} before the first FROM")
        stage = stages[-1]
        if keyword == "WORKDIR":
            stage.workdir = posixpath.join(stage.workdir, arguments)
        elif keyword == "RUN":
            stage.runs.append(arguments)
        elif keyword == "COPY":
            words = shlex.split(arguments)
            options = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            source_stage = next((o.split("=", 1)[1] for o in options if o.startswith("--from=")), "-")
            # Sources are relative to the build context or to the --from stage's root, never to WORKDIR.
            for source in paths[:-1]:
                stage.copies.append((source_stage, source, posixpath.join(stage.workdir, paths[-1])))
        elif keyword == "ENV":
            for word in shlex.split(arguments):
                name, equals, value = word.partition("=")
                if not equals:
                    raise RecipeError(f"ENV {arguments}: only the NAME=VALUE form is understood")
                stage.env.append((name, value))
        elif keyword == "EXPOSE":
            stage.expose += [port.split("/")[0] for port in arguments.split()]
        elif keyword == "ENTRYPOINT":
            if not arguments.startswith("["):
                raise RecipeError("ENTRYPOINT in shell form: signals would reach /bin/sh, not ortkit")
            stage.entrypoint = json.loads(arguments)
    if len(stages) < 2:
        raise RecipeError(f"expected a build stage and a run stage, found {len(stages)} FROM")
    return stages


def shell_commands(script):
    """The simple commands of a RUN line as (assignments, argv), split at && || ; and |."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, words = [], []
    for token in list(lexer) + [";"]:
        if token in ("&&", "||", ";", "|", "&"):
            if words:
                count = next((i for i, w in enumerate(words) if not ASSIGNMENT.match(w)), len(words))
                commands.append((dict(w.split("=", 1) for w in words[:count]), words[count:]))
            words = []
        else:
            words.append(token)
    return commands


def stage_commands(stage):
    return [command for run in stage.runs for command in shell_commands(run)]


def apt_packages(stage):
    packages = []
    for _, argv in stage_commands(stage):
        if argv[:2] in (["apt-get", "install"], ["apt", "install"]):
            packages += [w for w in argv[2:] if not w.startswith("-")]
    return packages


def option_value(argv, flag):
    """VALUE of `FLAG VALUE` or `FLAGVALUE` (cmake -Bbuild) in argv, or None."""
    for i, word in enumerate(argv):
        if word == flag and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(flag) and len(word) > len(flag) and not word.startswith(flag + "-"):
            return word[len(flag):]
    return None


def serving_runtime(markdown):
    documents = [d for d in yaml.safe_load_all(fenced_block(markdown, "yaml")) if d]
    runtimes = [d for d in documents if d.get("kind") == "ServingRuntime"]
    if len(runtimes) != 1:
        raise RecipeError(f"expected one ServingRuntime in the ```yaml block, found {len(runtimes)}")
    spec = runtimes[0]["spec"]
    containers = spec.get("containers") or []
    container = next((c for c in containers if c.get("name") == "kserve-container"), None)
    if container is None:
        raise RecipeError("the ServingRuntime has no container named kserve-container")
    return spec, container


def resolve_port(port, container):
    if isinstance(port, int):
        return port
    for entry in container.get("ports") or []:
        if entry.get("name") == port:
            return entry["containerPort"]
    raise RecipeError(f"a probe names port '{port}', which the container does not declare")


def query(markdown, name):
    dockerfile = fenced_block(markdown, "dockerfile")
    stages = stages_of(dockerfile_instructions(dockerfile))
    build, run = stages[0], stages[-1]
    build_commands = stage_commands(build)
    if name == "stages":
        return [(s.name, s.base) for s in stages]
    if name == "build-env":
        return [(var, argv[0]) for env, argv in build_commands for var in env]
    if name == "build-programs":
        return sorted({argv[0] for env, argv in build_commands if not env and "/" not in argv[0]})
    if name == "cmake-options":
        return [tuple(w[2:].split("=", 1)) for _, argv in build_commands if argv[0] == "cmake"
                for w in argv if w.startswith("-D")]
    if name == "cmake-dirs":
        return [(posixpath.normpath(posixpath.join(build.workdir, option_value(argv, "-S") or ".")),
                 posixpath.normpath(posixpath.join(build.workdir, option_value(argv, "-B"))))
                for _, argv in build_commands if argv[0] == "cmake" and option_value(argv, "-B")]
    if name == "ninja-targets":
        return [w for _, argv in build_commands if argv[0] == "ninja"
                for i, w in enumerate(argv[1:], 1) if not w.startswith("-") and argv[i - 1] not in ("-C", "-j", "-f")]
    if name == "workdir":
        return [build.workdir]
    if name == "copies":
        return [(stage.name,) + copy for stage in stages for copy in stage.copies]
    if name == "run-packages":
        return apt_packages(run)
    if name == "env":
        return run.env
    if name == "expose":
        return run.expose
    if name == "entrypoint":
        if run.entrypoint is None:
            raise RecipeError("the run stage has no ENTRYPOINT")
        return run.entrypoint
    if name == "docker-run-ports":
        example = re.search(r"`docker run ([^`]*)`", markdown)
        if not example:
            raise RecipeError("no `docker run ...` example in the prose")
        return re.findall(r"-p (?:[\d.]+:)?(\d+):(\d+)", example.group(1))
    spec, container = serving_runtime(markdown)
    if name == "runtime-argv":
        return list(container.get("command") or []) + list(container.get("args") or [])
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
    raise RecipeError(f"unknown query '{name}'")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    doc, name = sys.argv[1], sys.argv[2]
    try:
        with open(doc) as markdown:
            facts = query(markdown.read(), name)
    except RecipeError as error:
        sys.exit(f"{doc}: {name}: {error}")
    except (KeyError, TypeError, ValueError, yaml.YAMLError) as error:  # a field missing or of the wrong kind
        sys.exit(f"{doc}: {name}: {type(error).__name__}: {error}")
    for fact in facts:
        print("\t".join(map(str, fact)) if isinstance(fact, tuple) else fact)


if __name__ == "__main__":
    main()
