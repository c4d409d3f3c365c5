/* Preloaded into the servers that count.py runs under valgrind 3.19 (Debian 12).
 *
 * A Swift executable with an async main parks its main thread in libdispatch's
 * _dispatch_sig_thread, which calls sigsuspend() on a mask in libdispatch's own
 * .bss. Valgrind 3.19 crashes reading that mask ("VALGRIND INTERNAL ERROR:
 * signal 11" in its rt_sigsuspend wrapper), so no Swift server of ours ran under
 * callgrind. Passing the kernel a copy of the mask on the stack is the same call
 * and valgrind reads it fine. Outside valgrind nothing needs this file.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy;
    memcpy(&copy, mask, sizeof copy);
    /* The kernel's sigset is 8 bytes on x86_64, not glibc's 128. */
    return (int)syscall(SYS_rt_sigsuspend, &copy, 8);
}
