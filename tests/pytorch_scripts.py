"""What the tests of the PyTorch-style scripts in tests/scripts/ share: where the scripts
are, the import lines through which alone they may use minifw, and running a script under
PyTorch with those imports renamed back to torch (and torchvision)."""
import os
import re
import runpy
import tokenize

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
IMPORT = re.compile(r"^(import minifw(\.[\w.]+)? as \w+|from minifw(\.[\w.]+)? import [\w, ]+)$")


def source(name):
    with open(os.path.join(SCRIPTS, name)) as f:
        return f.read()


def lines_naming_minifw(name):
    """Every line of the script where the name `minifw` appears as code (not in a string or
    a comment)."""
    with open(os.path.join(SCRIPTS, name), "rb") as f:
        return [tok.line.strip() for tok in tokenize.tokenize(f.readline)
                if tok.type == tokenize.NAME and tok.string == "minifw"]


def run_under_torch(name, tmp_path):
    """The script with `minifw` renamed back to `torch` in its imports (and `minifw.vision` to
    `torchvision`), run under PyTorch."""
    lines = []
    for line in source(name).splitlines():
        if IMPORT.match(line):
            line = line.replace("import minifw as torch", "import torch").replace("minifw.vision", "torchvision")
            line = line.replace("minifw", "torch")
        lines.append(line)
    path = tmp_path / ("torch_" + name)
    path.write_text("\n".join(lines) + "\n")
    return runpy.run_path(str(path))
