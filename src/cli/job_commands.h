// The job verbs of the client: get, list, describe, cancel and logs.
//
//   tessera get ID [-o table|wide|json|yaml] [--watch]
//       one job as a table row, or the server's document; --watch reprints the row whenever
//       the job changes, until it is terminal.
//   tessera list [--phase P] [--queue Q] [--tenant T] [--name N] [--limit N | --all]
//                [-o table|wide|json|yaml] [--watch]
//       the jobs the token may see, oldest first: at most --limit (default 100) or --all;
//       -o json|yaml gives {"items": [...]}; --watch then reprints every row that changes
//       (and new jobs matching the filters) until interrupted or the server ends the stream.
//   tessera describe ID
//       the spec in brief, the status, the tasks with their nodes and devices, the events, and
//       for a pending job why it waits ("0/4 nodes: 3 insufficient gpu, ...") and when it
//       is expected to start.
//   tessera cancel ID...
//       asks each job to stop; prints what became of each.
//   tessera logs ID [--task T] [--stderr] [-f]
//       a task's output (default: the job's first task, stdout); -f follows it until the task
//       has ended.
// Every verb also takes --server and --token (client/client_flags.h). Exit statuses:
// exit_status.h.
#pragma once

#include "cli/command_env.h"

namespace tessera::cli {

// `argv[0]` is the verb's name.
int RunGetCommand(int argc, char** argv, const CommandEnv& env);
int RunListCommand(int argc, char** argv, const CommandEnv& env);
int RunDescribeCommand(int argc, char** argv, const CommandEnv& env);
int RunCancelCommand(int argc, char** argv, const CommandEnv& env);
int RunLogsCommand(int argc, char** argv, const CommandEnv& env);

}  // namespace tessera::cli
