# Real Batsim 4.2 + pybatsim for running coburst's scheduler files on the reference engine:
#
#   nix-shell nix/shell.nix
#   batsim -p platforms/kth_sp2.xml -w workloads/kth_sp2_delay_5000.json -e out/ref &
#   pybatsim schedulers/coburstEasy.py
#
# (coburst itself does not need Nix: see README.md.)  The scheduler side needs coburst on
# PYTHONPATH: the shell adds the repository root.
let
  kapack = import (fetchTarball "https://github.com/oar-team/nur-kapack/archive/master.tar.gz") { };
  pkgs = kapack.pkgs;
in
pkgs.mkShell {
  buildInputs = [
    kapack.batsim-420
    kapack.pybatsim
    (pkgs.python3.withPackages (ps: with ps; [ numpy scipy procset sortedcontainers pyzmq ]))
  ];
  shellHook = ''
    export PYTHONPATH=${toString ./..}:$PYTHONPATH
  '';
}
