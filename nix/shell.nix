# The real Batsim 4.2, pybatsim 3.2.1 and coburst's scheduler side, for running coburst's
# scheduler files on the reference engine (coburst itself does not need Nix: README.md,
# "Real Batsim with Nix"):
#
#   nix-shell nix/shell.nix
#   batsim -p platforms/dragonfly96.xml -w workloads/kth_sp2_delay_5000.json -e out/ref &
#   pybatsim schedulers/coburstBackfill.py -o '{"policy": "backfill-sjf-1"}'
#
# or, for a whole campaign on the real Batsim:  coburst campaign FILE.toml --engine batsim
#
# Pins: Batsim's source is the v4.2.0 tag (framagit, fixed hash), built with nur-kapack's
# batsim-420 recipe and its SimGrid 3.34; pybatsim is the PyPI 3.2.1 sdist (fixed hash, the
# version coburst's uv.lock pins); coburst is this checkout (on PYTHONPATH).  nur-kapack
# itself is an argument: pass a pinned revision for a fully frozen shell, e.g.
#   nix-shell nix/shell.nix --arg kapack 'import (fetchTarball "https://github.com/oar-team/nur-kapack/archive/<rev>.tar.gz") {}'
{ kapack ? import (fetchTarball "https://github.com/oar-team/nur-kapack/archive/master.tar.gz") { } }:

let
  pkgs = kapack.pkgs;
  py = pkgs.python3.pkgs;

  batsim = kapack.batsim-420.overrideAttrs (old: {
    version = "4.2.0";
    src = pkgs.fetchFromGitLab {
      domain = "framagit.org";
      owner = "batsim";
      repo = "batsim";
      rev = "v4.2.0";
      sha256 = "sha256-RsjvPhuJL6S804/BZGpzl9qkCujWJxWK0isD4osekMI=";
    };
  });

  pybatsim = py.buildPythonPackage rec {
    pname = "pybatsim";
    version = "3.2.1";
    src = py.fetchPypi {
      inherit pname version;
      sha256 = "4ba162727fffe5c71f8cf38c4ba0be93d3981c436ffb58319194d219b395bbbf";
    };
    propagatedBuildInputs = [ py.docopt kapack.procset py.pyzmq py.sortedcontainers ];
    doCheck = false;
  };

  # what coburst's scheduler files import (coburst/adapter, coburst/core, coburst/policies)
  python = pkgs.python3.withPackages (ps: [
    pybatsim
    kapack.procset
    ps.numpy
    ps.scipy
    ps.pandas
    ps.sortedcontainers
    ps.pyzmq
    ps.z3
    ps.numba
  ]);
in
pkgs.mkShell {
  name = "coburst-real-batsim";
  buildInputs = [ batsim python ];
  shellHook = ''
    export PYTHONPATH=${toString ./..}:$PYTHONPATH
    export BATSIM=${batsim}/bin/batsim
  '';
}
