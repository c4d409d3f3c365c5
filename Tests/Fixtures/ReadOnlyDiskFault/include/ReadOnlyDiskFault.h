// A fault injector for tests, loaded into a process with LD_PRELOAD (see
// ReadOnlyDiskFault.c). It exports no API of its own.
