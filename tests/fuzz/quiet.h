/* SPDX-License-Identifier: Apache-2.0 */
/*
 * quiet.h — for a libFuzzer harness whose code logs on standard output
 * (one write(2) per line: the store's skipped objects and dropped fields,
 * the reflector's failed responses, the Corefile parser's warnings about
 * imports that match nothing): fuzz_quiet_stdout() points standard output at
 * /dev/null, unless FUZZ_LOG is set in the environment (to read a replayed
 * input's log). libFuzzer reports on standard error, which stays. The lines
 * are still formatted, so the logging code is still fuzzed; only the write
 * goes nowhere (in a profile of fuzz_store, the writes were a third of the
 * harness's own time, and fuzz_corefile wrote 19 MB of warnings in four
 * minutes).
 *
 * Call it once, from the harness's first input, in the libFuzzer build only
 * (`make check`'s replays keep their output). Touches only the process's
 * file descriptor 1.
 */
#ifndef TOPODNS_FUZZ_QUIET_H
#define TOPODNS_FUZZ_QUIET_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void fuzz_quiet_stdout(void)
{
    int fd = getenv("FUZZ_LOG") ? -1 : open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        fflush(stdout);
        dup2(fd, STDOUT_FILENO);
        close(fd);
    }
}

#endif
