// A read-only file system, for tests: loaded into the ledger with LD_PRELOAD,
// it makes writes under $STOREKEEPER_DATA_DIR fail with EROFS while the file
// named by $READONLY_FAULT_SWITCH exists, as when a disk is remounted
// read-only under a running process. Everything else passes through.
//
// Why a preload: a real read-only remount is refused while any file on it is
// open for writing ("mount point is busy"), and the ledger always has its
// database open; chmod does not affect descriptors already open. Paths are
// compared as the kernel reports them (/proc/self/fd) or as given: the test
// gives the ledger an absolute data directory.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

// Looking at the switch must not disturb errno, which the caller may be about to read.
static int fault_active(void) {
    const char *switch_path = getenv("READONLY_FAULT_SWITCH");
    if (switch_path == NULL) return 0;
    int saved = errno;
    struct stat status;
    int active = stat(switch_path, &status) == 0;
    errno = saved;
    return active;
}

static int is_under_data_dir(const char *path) {
    const char *directory = getenv("STOREKEEPER_DATA_DIR");
    if (directory == NULL || path == NULL) return 0;
    size_t length = strlen(directory);
    return strncmp(path, directory, length) == 0 && (path[length] == '/' || path[length] == '\0');
}

static int refuses_fd(int fd) {
    if (!fault_active()) return 0;
    int saved = errno;
    char link[64];
    char path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    errno = saved;
    if (length <= 0) return 0;
    path[length] = '\0';
    return is_under_data_dir(path);
}

static int refuses_path(const char *path, int flags) {
    return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0 && fault_active() && is_under_data_dir(path);
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
#define REFUSE_FD(fd) \
    if (refuses_fd(fd)) { errno = EROFS; return -1; }

ssize_t write(int fd, const void *buffer, size_t count) {
    REFUSE_FD(fd);
    return REAL(write)(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    REFUSE_FD(fd);
    return REAL(pwrite)(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off64_t offset) {
    REFUSE_FD(fd);
    return REAL(pwrite64)(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
    REFUSE_FD(fd);
    return REAL(writev)(fd, vector, count);
}

ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
    REFUSE_FD(fd);
    return REAL(pwritev)(fd, vector, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec *vector, int count, off64_t offset) {
    REFUSE_FD(fd);
    return REAL(pwritev64)(fd, vector, count, offset);
}

int ftruncate(int fd, off_t length) {
    REFUSE_FD(fd);
    return REAL(ftruncate)(fd, length);
}

int ftruncate64(int fd, off64_t length) {
    REFUSE_FD(fd);
    return REAL(ftruncate64)(fd, length);
}

int fallocate(int fd, int mode, off_t offset, off_t length) {
    REFUSE_FD(fd);
    return REAL(fallocate)(fd, mode, offset, length);
}

int fallocate64(int fd, int mode, off64_t offset, off64_t length) {
    REFUSE_FD(fd);
    return REAL(fallocate64)(fd, mode, offset, length);
}

#define REFUSE_PATH(path) \
    if (fault_active() && is_under_data_dir(path)) { errno = EROFS; return -1; }

int unlink(const char *path) {
    REFUSE_PATH(path);
    return REAL(unlink)(path);
}

int unlinkat(int directory, const char *path, int flags) {
    REFUSE_PATH(path);
    return REAL(unlinkat)(directory, path, flags);
}

int rename(const char *from, const char *to) {
    REFUSE_PATH(from);
    REFUSE_PATH(to);
    return REAL(rename)(from, to);
}

// open's mode argument exists only with O_CREAT or O_TMPFILE (whose bits include
// O_DIRECTORY's, so it is compared whole, as glibc's __OPEN_NEEDS_MODE does).
#define OPEN_WITH_MODE(real, path, flags)                                        \
    mode_t mode = 0;                                                             \
    if (((flags) & O_CREAT) != 0 || ((flags) & O_TMPFILE) == O_TMPFILE) {        \
        va_list arguments;                         \
        va_start(arguments, flags);                \
        mode = va_arg(arguments, mode_t);          \
        va_end(arguments);                         \
    }                                              \
    if (refuses_path(path, flags)) { errno = EROFS; return -1; } \
    return real

int open(const char *path, int flags, ...) {
    OPEN_WITH_MODE(REAL(open), path, flags)(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    OPEN_WITH_MODE(REAL(open64), path, flags)(path, flags, mode);
}

int openat(int directory, const char *path, int flags, ...) {
    OPEN_WITH_MODE(REAL(openat), path, flags)(directory, path, flags, mode);
}

int openat64(int directory, const char *path, int flags, ...) {
    OPEN_WITH_MODE(REAL(openat64), path, flags)(directory, path, flags, mode);
}
