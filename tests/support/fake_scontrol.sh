#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# scontrol as eziotraced --flight-slurm runs it (`scontrol show job -o ID`), for the tests: the
# answer is the file $FAKE_SCONTROL_DIR/ID, waited for until it exists (the test decides when the
# job's user is known, and whether ever: no time is guessed). Its content: a uid, answered as
# slurmctld does (UserId=name(uid)); "fail", answered as for a job slurmctld does not know (exit 1);
# "garbage", exit 0 without a UserId field.
if [ "$1 $2 $3" != "show job -o" ] || [ -z "$4" ] || [ -z "$FAKE_SCONTROL_DIR" ]; then
  echo "fake scontrol: usage: FAKE_SCONTROL_DIR=DIR $0 show job -o ID" >&2
  exit 2
fi
answer="$FAKE_SCONTROL_DIR/$4"
while [ ! -e "$answer" ]; do sleep 0.02; done
case "$(cat "$answer")" in
  fail)
    echo "slurm_load_jobs error: Invalid job id specified" >&2
    exit 1
    ;;
  garbage)
    echo "JobId=$4 JobName=wrap JobState=RUNNING"
    ;;
  *)
    uid=$(cat "$answer")
    echo "JobId=$4 JobName=wrap UserId=fake($uid) GroupId=fake($uid) MCS_label=N/A JobState=RUNNING"
    ;;
esac
