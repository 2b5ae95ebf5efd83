// `tessera sim`: parses the command line and runs the trace simulator or a scenario file.
//
// Exit statuses: 0 success (every expectation held), 1 an expectation failed, 2 bad input
// (command line, trace or scenario file), with a message naming file, line and field.
#pragma once

namespace tessera::cli {

// `argv[0]` is "sim".
int RunSimCommand(int argc, char** argv);

}  // namespace tessera::cli
