import Testing

@testable import BadgeFlow

@Suite struct PrometheusTextTests {
    @Test func aCounterFamilyHasHelpTypeAndSamplesAndEndsWithALineFeed() {
        var t = PrometheusText()
        t.family("jobs_total", help: "Jobs done.", type: .counter, samples: [.init(value: 3)])
        #expect(t.string == "# HELP jobs_total Jobs done.\n# TYPE jobs_total counter\njobs_total 3\n")
    }

    @Test func aGaugeSaysGaugeAndAFamilyWithoutHelpHasNoHelpLine() {
        var t = PrometheusText()
        t.family("depth", help: "", type: .gauge, samples: [.init(value: -2)])
        #expect(t.string == "# TYPE depth gauge\ndepth -2\n")
    }

    @Test func labelValuesEscapeBackslashQuoteAndLineFeed() {
        var t = PrometheusText()
        t.family("e_total", help: "", type: .counter, samples: [.init(labels: [("code", "a\\b\"c\nd"), ("k", "é")], value: 1)])
        #expect(t.string == "# TYPE e_total counter\ne_total{code=\"a\\\\b\\\"c\\nd\",k=\"é\"} 1\n")
    }

    @Test func helpEscapesBackslashAndLineFeedButNotQuotes() {
        var t = PrometheusText()
        t.family("x", help: "a \"q\" \\ b\nc", type: .gauge, samples: [])
        #expect(t.string == "# HELP x a \"q\" \\\\ b\\nc\n# TYPE x gauge\n")
    }

    @Test func familiesComeOutInTheOrderAddedWithSamplesInTheOrderGiven() {
        var t = PrometheusText()
        t.family(
            "b_total", help: "", type: .counter, samples: [.init(labels: [("l", "2")], value: 2), .init(labels: [("l", "1")], value: 1)])
        t.family("a", help: "", type: .gauge, samples: [.init(value: 0)])
        #expect(
            t.string.split(separator: "\n") == [
                "# TYPE b_total counter", "b_total{l=\"2\"} 2", "b_total{l=\"1\"} 1", "# TYPE a gauge", "a 0",
            ])
    }

    @Test func realValuesAreWrittenAsTheFormatReadsThem() {
        #expect(PrometheusText.text(of: .real(0.25)) == "0.25")
        #expect(PrometheusText.text(of: .real(3)) == "3")
        #expect(PrometheusText.text(of: .real(.infinity)) == "+Inf")
        #expect(PrometheusText.text(of: .real(-.infinity)) == "-Inf")
        #expect(PrometheusText.text(of: .real(.nan)) == "NaN")
        #expect(Double(PrometheusText.text(of: .real(1e-5))) == 1e-5)
    }

    @Test func namesAreChecked() {
        #expect(PrometheusText.isValidName("badgeflow_errors_total", colons: true))
        #expect(PrometheusText.isValidName("a:b", colons: true))
        #expect(!PrometheusText.isValidName("a:b", colons: false))
        #expect(!PrometheusText.isValidName("1a", colons: true))
        #expect(!PrometheusText.isValidName("a-b", colons: true))
        #expect(!PrometheusText.isValidName("", colons: false))
    }
}
