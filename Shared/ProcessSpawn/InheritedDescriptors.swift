#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps the parent's descriptors from 3 up out of a child started with `actions`.
///
/// posix_spawn hands a child every descriptor not marked close-on-exec, and
/// nothing makes every library mark its own: a test run or a load generator
/// holding thousands of sockets could pass them on, and a connection a child
/// holds stays open after the parent closes it. Foundation's `Process` closed
/// them; this does it with glibc's `posix_spawn_file_actions_addclosefrom_np`
/// (2.34 and later), looked up at run time because Swift's Glibc module imports
/// no GNU extension. Where the C library lacks it, the child inherits as
/// before; false then.
@discardableResult
func closeInheritedDescriptors(in actions: inout posix_spawn_file_actions_t) -> Bool {
    guard let addCloseFrom else { return false }
    return addCloseFrom(&actions, 3) == 0
}

private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

/// Looked up once, not at every spawn.
private let addCloseFrom: AddCloseFrom? = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np")
    .map { unsafeBitCast($0, to: AddCloseFrom.self) }
