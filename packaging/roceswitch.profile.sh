# Where rocectl finds the packaged roceswitch daemon (its systemd unit
# listens on this socket; see /etc/roceswitch/roceswitch.toml).
export ROCESWITCH_ADDR="${ROCESWITCH_ADDR:-unix:/run/roceswitch/ctl.sock}"
