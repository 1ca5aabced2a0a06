#!/usr/bin/env bash
# The main job on an embedded default: a local database file, no servers.
# Creates .agentfs/demo.db, imports a directory, works with files, kv and
# the tool-call log, snapshots and checks the database.
set -euo pipefail
cd "$(dirname "$0")/.."
A=./bin/agentfs
[ -x "$A" ] || (cd cli && go build -o ../bin/agentfs ./cmd/agentfs)

set -x
$A init demo --force
$A fs demo write /hello.txt "Hello from AgentFS"
$A fs demo mkdir -p /project/src
$A fs demo import docs /project/docs
$A fs demo ls -R /project
$A fs demo cat /hello.txt
$A kv demo set config '{"model":"small","temperature":0.2}'
$A kv demo get config
id=$($A tools demo start search --params '{"q":"agentfs"}')
$A tools demo finish "$id" --result '{"hits":3}'
$A timeline demo
$A snapshot demo create first
$A snapshot demo list
$A fsck demo
$A query demo "SELECT COUNT(*) AS files FROM fs_inode WHERE (mode & 61440) = 32768"
