import Foundation

/// Reads an app receipt's fields from its PKCS#7 container, locally, as
/// Apple's `ReceiptUtility` (app-store-server-library) does to find a
/// transaction id without calling verifyReceipt. Container only: nothing is
/// verified (`PKCS7Container` says why). Attribute types Storekeeper does not
/// read are skipped without decoding, as Apple's own code does; a field it
/// reads that is not of its type fails the receipt.
///
/// Every failure is an `AppReceiptError`: the gateway's `400 bad_receipt_encoding`.
public enum AppReceiptParser {
    /// A receipt as clients send it: base64, possibly wrapped in lines.
    public static func parse(base64 text: String) throws(AppReceiptError) -> AppReceipt {
        let compact = text.filter { !$0.isWhitespace }
        guard let bytes = Data(base64Encoded: compact) else { throw .notBase64 }
        return try parse(der: Array(bytes))
    }

    /// A receipt's bytes (BER, despite the name Apple's tools give them).
    public static func parse(der bytes: [UInt8]) throws(AppReceiptError) -> AppReceipt {
        var receipt = AppReceipt()
        for attribute in try ReceiptAttribute.set(try PKCS7Container.content(of: bytes)) {
            let value = attribute.value
            switch attribute.type {
            case 0: receipt.receiptType = try ReceiptAttributeValue.string(value)
            case 2: receipt.bundleID = try ReceiptAttributeValue.string(value)
            case 3: receipt.appVersion = try ReceiptAttributeValue.string(value)
            case 12: receipt.creationDateMs = try ReceiptAttributeValue.date(value)
            case 17: receipt.inAppPurchases.append(try inAppPurchase(value))
            case 18: receipt.originalPurchaseDateMs = try ReceiptAttributeValue.date(value)
            case 19: receipt.originalAppVersion = try ReceiptAttributeValue.string(value)
            case 21: receipt.expirationDateMs = try ReceiptAttributeValue.date(value)
            default: continue  // opaque value, SHA-1 hash, Apple's reserved types
            }
        }
        return receipt
    }

    private static func inAppPurchase(_ bytes: [UInt8]) throws(AppReceiptError) -> AppReceipt.InAppPurchase {
        var purchase = AppReceipt.InAppPurchase()
        for attribute in try ReceiptAttribute.set(bytes) {
            let value = attribute.value
            switch attribute.type {
            case 1701: purchase.quantity = try ReceiptAttributeValue.integer(value)
            case 1702: purchase.productID = try ReceiptAttributeValue.string(value)
            case 1703: purchase.transactionID = try ReceiptAttributeValue.string(value)
            case 1704: purchase.purchaseDateMs = try ReceiptAttributeValue.date(value)
            case 1705: purchase.originalTransactionID = try ReceiptAttributeValue.string(value)
            case 1706: purchase.originalPurchaseDateMs = try ReceiptAttributeValue.date(value)
            case 1708: purchase.expiresDateMs = try ReceiptAttributeValue.date(value)
            case 1711: purchase.webOrderLineItemID = String(try ReceiptAttributeValue.integer(value))
            case 1712: purchase.cancellationDateMs = try ReceiptAttributeValue.date(value)
            case 1713: purchase.isTrialPeriod = try ReceiptAttributeValue.flag(value)
            case 1719: purchase.isInIntroOfferPeriod = try ReceiptAttributeValue.flag(value)
            default: continue  // product type, offer ids, Apple's reserved types
            }
        }
        return purchase
    }
}
