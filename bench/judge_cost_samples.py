"""The judge cost bench's samples: 13 hand-written RAG answers with 2-4 chunks each.

Most answers paraphrase their chunks, four are partly unsupported, two are copied
verbatim and one mixes a copied sentence with a paraphrase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Sample:
    id: str
    kind: str
    """paraphrase, partly unsupported, verbatim or mixed (one sentence verbatim)."""
    question: str
    chunks: tuple[str, ...]
    answer: str

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "question": self.question,
            "chunks": list(self.chunks),
            "answer": self.answer,
        }


SAMPLES: tuple[Sample, ...] = (
    Sample(
        "s01",
        "paraphrase",
        "When is the Halden Street library open on weekends?",
        (
            "The Halden Street branch library reopened in March after a six-month renovation "
            "that added a children's reading room and twelve public computers. The branch is "
            "run by the county library service and shares its catalogue with the other nine "
            "branches, so books can be requested from anywhere in the county and collected at "
            "Halden Street.",
            "Opening hours for the Halden Street branch: Monday to Friday from 9:00 to 19:00, "
            "Saturday from 10:00 to 16:00. The branch is closed on Sundays and on public "
            "holidays. The returns box by the front door is emptied every morning at 8:30, "
            "including on days when the branch is closed.",
            "Parking near the branch is limited to the twenty spaces behind the community "
            "hall, which are free for the first two hours. Cyclists can use the covered racks "
            "beside the entrance. The number 14 bus stops directly outside.",
        ),
        "On Saturdays the library opens at 10 in the morning and closes at 4 in the "
        "afternoon. It does not open on Sundays, though you can still drop returns in the box "
        "by the front door.",
    ),
    Sample(
        "s02",
        "partly unsupported",
        "What does the warranty on the Corvel e-bike battery cover?",
        (
            "Corvel batteries carry a warranty of three years or 800 full charge cycles, "
            "whichever comes first. The warranty covers manufacturing defects and a loss of "
            "capacity below 70 percent of the rated capacity within that period.",
            "The warranty does not cover damage from water immersion, from charging with a "
            "third-party charger, or from storing the battery fully discharged for more than "
            "three months. Claims must be made through the dealer that sold the bike, with the "
            "proof of purchase and the battery's serial number.",
        ),
        "The battery is covered for three years or 800 charge cycles, whichever ends first, "
        "against defects and capacity falling under 70 percent. The warranty also pays for a "
        "free replacement charger if the original one fails. You can claim directly online "
        "without going through a dealer.",
    ),
    Sample(
        "s03",
        "verbatim",
        "How long should a sourdough starter rest after feeding?",
        (
            "Feed the starter with equal weights of flour and water, stir well and leave it "
            "uncovered for five minutes. Cover the jar loosely and let it rest at room "
            "temperature for four to six hours, until it has roughly doubled in size.",
            "A starter kept in the fridge only needs feeding once a week. Take it out the "
            "evening before you plan to bake and give it two feedings twelve hours apart "
            "before using it in a dough.",
        ),
        "Cover the jar loosely and let it rest at room temperature for four to six hours, "
        "until it has roughly doubled in size. A starter kept in the fridge only needs "
        "feeding once a week.",
    ),
    Sample(
        "s04",
        "paraphrase",
        "What happens when a client exceeds the Tessera API rate limit?",
        (
            "Every Tessera API key may make 600 requests per minute and 20,000 per day. Limits "
            "are counted per key, not per IP address, and requests that fail with a 5xx status "
            "are not counted against the limit.",
            "When a key goes over its per-minute limit, the API answers 429 Too Many Requests "
            "with a Retry-After header giving the number of seconds to wait. Keys that exceed "
            "the daily limit are blocked until midnight UTC. Repeated abuse can lead to a key "
            "being suspended after a manual review.",
            "Enterprise customers can ask for higher limits through their account manager. "
            "Limits for sandbox keys are a tenth of the production ones.",
        ),
        "Going over the per-minute quota gets a 429 response, and its Retry-After header "
        "says how many seconds to back off. If the daily cap is exceeded instead, the key "
        "stays blocked until midnight UTC.",
    ),
    Sample(
        "s05",
        "partly unsupported",
        "Are children admitted free to the Ostrander Maritime Museum?",
        (
            "Admission to the Ostrander Maritime Museum is 14 euros for adults and 9 euros for "
            "students and visitors over 65. Children under 12 enter free when accompanied by "
            "an adult. Family tickets for two adults and up to three children cost 32 euros.",
            "The museum is open Tuesday to Sunday from 10:00 to 17:00, with late opening until "
            "21:00 on the first Thursday of each month. The harbour tour boat leaves from the "
            "museum pier at 11:00 and 14:00 between May and September.",
        ),
        "Children under 12 get in for free as long as an adult is with them. Teenagers "
        "between 12 and 17 also pay nothing on the first Thursday of each month. The harbour "
        "boat tour is included in every ticket.",
    ),
    Sample(
        "s06",
        "paraphrase",
        "When will the Northgate data centre maintenance take place and what is affected?",
        (
            "Planned maintenance at the Northgate data centre will take place on Saturday 14 "
            "June between 01:00 and 05:00 UTC. Engineers will replace the two main power "
            "distribution units in hall B, one after the other, so that at least one feed "
            "stays live throughout.",
            "Services hosted only in hall B may see brief interruptions of up to two minutes "
            "while the load moves between feeds. Virtual machines in halls A and C are not "
            "affected. Customers with redundant deployments across halls should see no impact "
            "at all.",
            "Object storage and the managed database service run in all three halls and will "
            "stay available. The status page will be updated at the start and the end of the "
            "work, and at any point an interruption lasts longer than planned.",
            "If you need to move a workload out of hall B ahead of the work, open a support "
            "ticket before 12 June and the operations team will schedule a live migration at "
            "no charge.",
        ),
        "The work is scheduled for Saturday 14 June from 01:00 to 05:00 UTC, when the power "
        "distribution units in hall B will be swapped one at a time. Workloads that live only "
        "in hall B could drop for up to two minutes, while halls A and C carry on normally. "
        "Object storage and managed databases stay up throughout.",
    ),
    Sample(
        "s07",
        "verbatim",
        "Which documents do I need to renew a fishing permit for Lake Varna?",
        (
            "Fishing permits for Lake Varna are valid for one calendar year and can be renewed "
            "from 1 December. To renew, bring your previous permit, a photo identity document "
            "and proof of address dated within the last three months to any district office.",
            "Renewal costs 45 lari for residents and 90 lari for visitors. Anglers under 16 "
            "fish free but must still carry a youth card, which is issued at the district "
            "office on the same day.",
        ),
        "To renew, bring your previous permit, a photo identity document and proof of "
        "address dated within the last three months to any district office. Renewal costs 45 "
        "lari for residents and 90 lari for visitors.",
    ),
    Sample(
        "s08",
        "mixed",
        "What changed in version 3.2 of the Quillmark editor?",
        (
            "Quillmark 3.2 adds a split view that shows the Markdown source and the rendered "
            "page side by side. Scrolling either pane keeps the other in step. The export menu "
            "gains a PDF option that embeds the fonts used in the document.",
            "Version 3.2 drops support for the legacy plugin format introduced in 1.x; plugins "
            "must be rebuilt with the 2.0 plugin kit. Spell checking now runs in a background "
            "thread, which fixes the typing lag reported on long documents.",
        ),
        "Quillmark 3.2 adds a split view that shows the Markdown source and the rendered page "
        "side by side. It also moves spell checking off the main thread, curing the lag when "
        "typing in long files, and old 1.x plugins no longer load.",
    ),
    Sample(
        "s09",
        "partly unsupported",
        "How often do trains run between Brenholm and Kessel on Sundays?",
        (
            "On weekdays trains between Brenholm and Kessel run every 20 minutes from 06:00 to "
            "20:00 and every 40 minutes in the evening. The journey takes 34 minutes with stops "
            "at Aalby and Mersted.",
            "On Saturdays and Sundays the service runs every 30 minutes all day. The first "
            "Sunday train leaves Brenholm at 07:15 and the last leaves Kessel at 23:05. "
            "Bicycles are carried free on weekend trains, space permitting.",
        ),
        "On Sundays there is a train every 30 minutes throughout the day, starting at 07:15 "
        "from Brenholm. The trip lasts about 25 minutes, and bikes cost 3 euros each.",
    ),
    Sample(
        "s10",
        "paraphrase",
        "How should Velorin eye drops be stored?",
        (
            "Store unopened bottles of Velorin eye drops in a refrigerator at 2 to 8 °C. Do not "
            "freeze. Keep the bottle in its outer carton to protect it from light.",
            "Once opened, a bottle may be kept at room temperature below 25 °C and must be "
            "discarded four weeks after opening, even if some solution remains. Write the date "
            "of opening on the carton.",
            "Do not use the drops if the solution has changed colour or contains particles. Ask "
            "your pharmacist how to throw away medicines you no longer use.",
        ),
        "Keep unopened bottles cold, between 2 and 8 °C, in the carton and away from light, "
        "and never let them freeze. After opening you can keep a bottle at room temperature "
        "below 25 °C, but throw it away four weeks later.",
    ),
    Sample(
        "s11",
        "partly unsupported",
        "How many days a week can staff at Lindqvist & Ode work from home?",
        (
            "Staff at Lindqvist & Ode may work from home up to two days a week once they have "
            "completed their probation period. Team leads can agree different patterns for "
            "roles that need to be on site, such as reception and the print room.",
            "Home working days must be recorded in the staff calendar by Friday for the "
            "following week. The company pays a one-off allowance of 300 euros towards a desk "
            "or chair for home working.",
        ),
        "After probation, employees can work from home for up to two days each week. The "
        "company also covers their home internet bill every month. Requests for a third day "
        "are approved automatically for staff with more than five years of service.",
    ),
    Sample(
        "s12",
        "paraphrase",
        "Why is the beach at Port Saldane black?",
        (
            "The beaches on the western coast of Saldane Island are formed from basalt that "
            "erupted from the island's shield volcano about 4,000 years ago. Waves broke the "
            "lava flows into grains, giving the sand its dark colour.",
            "Black sand heats up much more than pale sand in direct sun; on summer afternoons "
            "its surface can pass 60 °C, so visitors are advised to wear sandals. The sand is "
            "protected, and taking it off the island is forbidden.",
        ),
        "Its sand comes from basalt lava that the island's volcano erupted some 4,000 years "
        "ago, which the sea has ground into dark grains. In summer the surface can get hotter "
        "than 60 °C, so wear sandals.",
    ),
    Sample(
        "s13",
        "paraphrase",
        "Can I bring my dog on the Kavala ferry?",
        (
            "Dogs may travel on Kavala ferries on the open deck or in the pet area on deck 4. "
            "They must be on a lead and wear a muzzle in indoor areas. Dogs are not allowed in "
            "cabins, restaurants or the lounge.",
            "Each dog needs a pet ticket, which costs 12 euros per crossing and can be bought "
            "online or at the port. Assistance dogs travel free and may accompany their owner "
            "everywhere on board.",
        ),
        "Yes, dogs are welcome on the open deck or in the deck 4 pet area, on a lead. A pet "
        "ticket costs 12 euros per crossing, while assistance dogs go free. Hope this helps!",
    ),
)
QUICK_IDS = ("s01", "s02", "s03", "s08")
