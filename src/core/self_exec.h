// Running this program again in place (exec), under its own name.
#pragma once

namespace hwt {

// execv of the program's own file with `argv`. The file is named by the path /proc/self/exe
// links to: an exec of /proc/self/exe itself would name the process "exe" in ps, top, pgrep
// and the kernel's messages. Falls back to /proc/self/exe when that path no longer runs (the
// file was replaced since this process started). Returns only if both fail.
void exec_self(char* const argv[]);

}  // namespace hwt
