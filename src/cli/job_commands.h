// The job verbs of the client: get, list, describe, cancel and logs.
//
//   tessera get ID [-o table|wide|json|yaml] [--watch]
//       one job as a table row, or the server's document; --watch reprints the row whenever
//       the job changes, until it is terminal.
//   tessera list [--state active|terminal|all | -A/--all] [--phase P] [--queue Q] [--tenant T]
//                [--name N] [--order newest|oldest] [--limit N] [--page-token T]
//                [-o table|wide|json|yaml] [--watch]
//       the jobs the token may see: by default the active ones (Pending, Admitted, Running),
//       newest first, at most --limit (default 100; 0: every one). --phase alone lists that
//       phase in any state. Under a table, stderr says how many more match and the
//       --page-token of the next page (or, when no job is active, that --all shows ended
//       ones); -o json|yaml gives the API's page {"items", "nextPageToken",
//       "remainingItemCount"}. --watch then reprints every listed job whose row changes (and
//       new jobs matching the filters) until interrupted or the server ends the stream.
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
