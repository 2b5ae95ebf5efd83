#!/bin/bash
# Slurm's job-completion script for Tessera: tells `tessera agent --backend slurm` that a job
# ended, so that the agent reads that job at once instead of at its next poll and Tessera
# refills the freed slot within milliseconds (docs/agents/slurm.md, "Job-end notices").
#
# In slurm.conf, on the slurmctld host:
#   JobCompType=jobcomp/script
#   JobCompLoc=/etc/slurm/tessera-job-ended.sh
# and start the agent with --slurm-notice-addr HOST:PORT. slurmctld runs this script as each
# job ends, one at a time, with the job's id in $JOBID and an environment of its own (not
# slurmctld's), so the agent's address is set here. The request is written with bash's
# /dev/tcp rather than curl: the script must start and finish in a few milliseconds, or the
# notices fall behind the jobs. A notice that does not arrive costs nothing but time: the
# agent's polls still see every end.
URL="http://127.0.0.1:6821/slurm/job-ended"

address=${URL#http://}
path=/${address#*/}
address=${address%%/*}
exec 3<>"/dev/tcp/${address%:*}/${address##*:}" || exit 0
body="job_id=$JOBID"
printf 'POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
  "$path" "$address" "${#body}" "$body" >&3
read -r -t 2 status <&3 || true
