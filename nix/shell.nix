# The real Batsim 4.2.1, pybatsim 3.2.1 and coburst's scheduler side, for running coburst's
# scheduler files on the reference engine (coburst itself does not need Nix: README.md,
# "Real Batsim with Nix"):
#
#   nix-shell nix/shell.nix
#   batsim -p platforms/dragonfly96.xml -w workloads/kth_sp2_delay_5000.json -e out/ref &
#   pybatsim schedulers/coburstBackfill.py -o '{"policy": "backfill-sjf-1"}'
#
# a linear dragonfly (coburst platform dragonfly --style cluster) carries its burst-buffer roles in
# a coburst-roles zone property, which the real Batsim needs as -r:
#   batsim -p df.xml $(coburst platform info --batsim-roles df.xml) -w workloads/kth_alloc_only_sample.json -e out/ref &
#
# or, for a whole campaign on the real Batsim:  coburst campaign FILE.toml --engine batsim
#
# Pins: Batsim's source is the v4.2.1 tag (framagit, fixed hash), built with nur-kapack's
# batsim-420 recipe against its SimGrid 3.32 (the SimGrid Debian builds Batsim 4.2.1 with, and
# the one coburst's cross-engine recordings were made with); pybatsim is the PyPI 3.2.1 sdist
# (fixed hash, the version coburst's uv.lock pins); coburst is this checkout (on PYTHONPATH).
# nur-kapack is pinned to the last revision that still has those recipes (its master has
# commented them out); another one can be passed:
#   nix-shell nix/shell.nix --arg kapack 'import (fetchTarball "https://github.com/oar-team/nur-kapack/archive/<rev>.tar.gz") {}'
{ kapack ? import (fetchTarball {
    url = "https://github.com/oar-team/nur-kapack/archive/018ce0c1872fa66b30aa054ae649b4fca6d6d64a.tar.gz";
    sha256 = "1dpa6cdvgpnl0bzz2kc4g9fbfwg2i7rg66fy3r1fyhad2ns9i1p9";
  }) { } }:

let
  pkgs = kapack.pkgs;
  py = pkgs.python3.pkgs;

  batsim = (kapack.batsim-420.override { simgrid = kapack.simgrid-332light; }).overrideAttrs (old: {
    version = "4.2.1";
    src = pkgs.fetchFromGitLab {
      domain = "framagit.org";
      owner = "batsim";
      repo = "batsim";
      rev = "v4.2.1";
      sha256 = "sha256-xecLKFRIpoI149Aj4wFKiW4p0ClzbQuCbzwFwon5igA=";
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
