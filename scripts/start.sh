#!/bin/sh
# `npm start`: a development Organization in dev-org/ (created once), then its Group Authority on the
# embedded SQLite store in the foreground. The port is the configuration's (7443) unless MWP_PORT
# says otherwise (0: any free port).
set -e
if [ ! -f dev-org/mwp.config.json ]; then
  # org init's own "next:" hint says to start the server, which this script does next.
  node bin/run.js org init dev-org | grep -v '^next:'
fi
echo "serving dev-org/ (Ctrl-C stops it); in another terminal: cd dev-org && mwp mission list"
exec node bin/run.js authority serve --config dev-org/mwp.config.json
