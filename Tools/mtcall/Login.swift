// `mtcall login`: signs in and keeps the authorization in --session, asking on the terminal what the flags do not
// give (the phone, the code, the cloud password with echo off, a new account's name), as Telegram's apps do; or
// signs a bot in with --bot-token. The signed-in user is printed as tl-json.
import ArgumentParser
import Foundation
import Logging
import MTProtoClient
import TLJSON
import TelegramApi
import TelegramClient
import TelegramSession

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MTCall {
    /// `mtcall login` / `qr-login`: signs in, prints the user, and keeps the key signed in in --session.
    /// `mtcall password`: sets, changes or removes the signed-in account's cloud password, and prints `true`.
    func runSignInCommand(logger: Logger) async throws {
        let (client, store) = try await makeClient(logger: logger, followsUpdates: false)
        let outcome: Result<String, any Error>
        do {
            switch method {
                case "qr-login": outcome = .success(TLJSONWriter.json(try await qrLogin(client)).description)
                case "password":
                    if let phone, let code { try await signIn(client, phone: phone, code: code, store: store) }
                    guard let newPassword else { throw ValidationError("METHOD password needs --new-password") }
                    try await client.setPassword(newPassword.isEmpty ? nil : newPassword, current: password, hint: hint)
                    outcome = .success("true")
                default: outcome = .success(TLJSONWriter.json(try await signIn(client, store: store)).description)
            }
        } catch {
            outcome = .failure(error)
        }
        await client.close()
        try await store?.close()
        switch outcome {
            case .success(let text):
                print(text)
            case .failure(let error):
                try fail(error)
        }
    }

    private func signIn(_ client: TelegramClient, store: SQLiteSessionStore?) async throws -> Api.User {
        if let botToken { return try await client.signIn(botToken: botToken) }
        let phone = try self.phone ?? Terminal.ask("Phone number: ")
        if let current = try await signedIn(client, as: phone, store: store) { return current }
        return try await client.signIn(phone: phone, prompts: Self.prompts(code: code, password: password))
    }

    /// Prints each login token's URL on standard output (one line, flushed) and its QR code on standard error, and
    /// waits until another app accepts it.
    private func qrLogin(_ client: TelegramClient) async throws -> Api.User {
        let password = self.password
        return try await client.signInWithQRCode(show: { token in
            FileHandle.standardOutput.write(Data((token.url + "\n").utf8))
            if let drawn = try? QRCode(text: token.url).terminalText() {
                Terminal.say(drawn + "Scan it in Telegram: Settings → Devices → Link Desktop Device.")
            }
        }, password: Self.prompts(code: nil, password: password).password)
    }

    /// Prompts that answer with the flags' values first, then ask on the terminal (a wrong flag value is asked
    /// again, interactively).
    static func prompts(code: String?, password: String?) -> SignInPrompts {
        SignInPrompts(
            code: { sent, previous in
                if previous == nil, let code { return .code(code) }
                if let previous { Terminal.say("\(previous); try again") }
                let answer = try Terminal.ask("Code (\(Self.describe(sent.type)); empty to resend): ")
                return answer.isEmpty ? .resend : .code(answer)
            },
            password: { hint, previous in
                if previous == nil, let password { return password }
                if let previous { Terminal.say("\(previous); try again") }
                return try Terminal.askSecret("Cloud password" + (hint.map { " (hint: \($0))" } ?? "") + ": ")
            },
            signUp: { _ in
                Terminal.say("This number has no account yet: signing up.")
                let first = try Terminal.ask("First name: ")
                let last = try Terminal.ask("Last name (optional): ")
                return SignUpDetails(firstName: first, lastName: last)
            })
    }

    static func describe(_ type: Api.auth.SentCodeType) -> String {
        switch type {
            case .sentCodeTypeApp(let app): "\(app.length) digits, sent to your other Telegram app"
            case .sentCodeTypeSms(let sms): "\(sms.length) digits, sent by SMS"
            case .sentCodeTypeCall(let call): "\(call.length) digits, said in a phone call"
            default: "sent"
        }
    }
}

/// Questions on standard error, answers from standard input.
enum Terminal {
    struct EndOfInput: Error, CustomStringConvertible {
        var description: String { "standard input ended" }
    }

    static func say(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func ask(_ prompt: String) throws -> String {
        FileHandle.standardError.write(Data(prompt.utf8))
        guard let line = readLine(strippingNewline: true) else { throw EndOfInput() }
        return line.trimmingCharacters(in: .whitespaces)
    }

    /// A line read with the terminal's echo off (when standard input is a terminal), restored after. Echo goes off
    /// before the prompt shows, and without flushing, so nothing typed after the prompt is echoed or dropped.
    static func askSecret(_ prompt: String) throws -> String {
        var saved = termios()
        let isTerminal = isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        }
        defer {
            if isTerminal {
                _ = tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                FileHandle.standardError.write(Data("\n".utf8))
            }
        }
        FileHandle.standardError.write(Data(prompt.utf8))
        guard let line = readLine(strippingNewline: true) else { throw EndOfInput() }
        return line
    }
}
