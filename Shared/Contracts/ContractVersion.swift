/// The version of the message contracts this build speaks. Bumped only for a
/// change that an older peer would misread; adding a field is not one
/// (proto3 ignores unknown fields), so mixed versions can run side by side
/// during a rolling upgrade.
public enum ContractVersion {
    public static let current: UInt32 = 1
}
