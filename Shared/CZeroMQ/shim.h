// libzmq (Debian libzmq3-dev). No pkgConfig: libzmq's private -isystem flags make SwiftPM warn.
#include <zmq.h>
